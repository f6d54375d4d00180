"""``<package-dir>/wandb_metrics.py``: each loop's W&B metric definitions, from the catalog.

For every declared loop (``loops:``) the module holds a tuple of
:class:`metric_catalog.wandb_setup.WandbMetric`, one per logged key of each teed row the
loop logs (``emitted_by`` naming it, or none), and ``define_<loop>(run)`` calling
``run.define_metric`` for each (:func:`metric_catalog.wandb_setup.define_metrics`);
``define_loop(run, name)`` picks one by name and ``LOOPS`` maps names to tuples. A catalog
without loops gets one ``ALL`` tuple and ``define_all``.

Per row: the logged key (prefix and key; a family's key up to its first placeholder,
then ``*``, the only glob W&B's ``define_metric`` takes); ``summary``/``goal`` from the
row's ``goal``; deprecated rows hidden; the x axis the row's own ``step_axis`` when it is
not the training step, else the loop's step key covering the key (the loop's
``step_keys``, e.g. ``train/global_step`` for ``train/*``), else the caller's
``step_metric=`` (W&B's own ``_step`` when none).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Final

from metric_catalog.series_rules import parse_pattern, qualified_key

from ..catalog.model import Catalog, Loop, MetricRow
from ..config import Config
from .names import PACKAGE, Claim, own_names
from .python import py_str
from .writer import marker_line

__all__ = [
    "MODULE",
    "generated_names",
    "render_wandb",
    "render_wandb_module",
    "wandb_key",
    "wandb_metrics",
]

MODULE: Final = "wandb_metrics"
"""The generated module's name, beside the owners' modules."""

_IDENT: Final = re.compile(r"[^a-z0-9_]")
_SUMMARY: Final = {"maximize": "max", "minimize": "min"}
_LINE: Final = 100


def wandb_key(prefix: str, logger_key: str) -> str:
    """The key W&B shows for a row's prefix and key; a family's, as a glob ending in ``*``."""
    found = ""
    for part in parse_pattern(qualified_key(prefix, logger_key)):
        if not isinstance(part, str):
            return found + "*"
        found += part
    return found


def wandb_metrics(
    rows: Iterable[MetricRow], loop: Loop | None = None
) -> list[tuple[str, str, str, str, bool]]:
    """``(name, step_metric, summary, goal, hidden)`` per distinct key or glob of ``rows``.

    The x axis of a key is the row's own ``step_axis`` when it is not the training step,
    else the loop's step key covering it (``step_keys``: ``train/global_step`` for
    ``train/*``), else ``""`` (the caller's ``step_metric``, or W&B's ``_step``). The
    loop's step keys are defined first, as metrics of their own.
    """
    found: dict[str, tuple[str, str, str, str, bool]] = {}
    for step in loop.step_keys if loop is not None else ():
        found.setdefault(step.key, (step.key, "", "", "", False))
    for row in rows:
        if row.logger_key is None:
            continue
        for prefix in row.prefixes:
            name = wandb_key(prefix, row.logger_key)
            if name in found:
                continue
            axis = row.step_axis
            if not axis and loop is not None:
                covering = loop.step_key(qualified_key(prefix, row.logger_key))
                axis = "" if covering is None or covering.key == name else covering.key
            found[name] = (
                name,
                axis,
                _SUMMARY.get(row.goal, ""),
                row.goal,
                row.deprecated is not None,
            )
    # One step key may cover several prefixes (rollout/step for rollout, actor, critic):
    # it is defined once, in the order first listed.
    step_names = dict.fromkeys(s.key for s in loop.step_keys) if loop is not None else {}
    steps = [found.pop(name) for name in step_names]
    return steps + sorted(found.values())


def _entry(name: str, step_metric: str, summary: str, goal: str, hidden: bool) -> str:
    args = [py_str(name)]
    if step_metric:
        args.append(f"step_metric={py_str(step_metric)}")
    if summary:
        args.append(f"summary={py_str(summary)}")
    if goal:
        args.append(f"goal={py_str(goal)}")
    if hidden:
        args.append("hidden=True")
    return _call("    ", "WandbMetric", args, ",")


def _call(pad: str, head: str, args: list[str], tail: str) -> str:
    """``head(args)tail`` laid out as ``ruff format`` does: flat, else the arguments on one
    indented line, else one per line with a trailing comma."""
    flat = f"{pad}{head}({', '.join(args)}){tail}"
    if len(flat) <= _LINE:
        return flat
    inner = f"{pad}    {', '.join(args)}"
    if len(inner) <= _LINE:
        return f"{pad}{head}(\n{inner}\n{pad}){tail}"
    each = "".join(f"{pad}    {arg},\n" for arg in args)
    return f"{pad}{head}(\n{each}{pad}){tail}"


_OWN: Final = (
    ("annotations", "its import from __future__"),
    ("Any", "an import from typing"),
    ("Final", "an import from typing"),
    ("WandbMetric", "an import from metric_catalog.wandb_setup"),
    ("define_metrics", "an import from metric_catalog.wandb_setup"),
    ("LOOPS", "its table of every loop's definitions"),
    ("define_loop", "its function that defines a loop named at run time"),
)
"""The names :func:`render_wandb_module` binds whatever the catalog says."""
_NO_LOOP: Final = "all"
"""The one block of a catalog without loops (``ALL``, ``define_all``)."""


def _loop_names(loop: str) -> tuple[str, str]:
    """The tuple constant and the function a loop's block binds (``GRPO``, ``define_grpo``)."""
    constant = _IDENT.sub("_", loop.lower()).upper()
    return constant, f"define_{constant.lower()}"


def _renders(catalog: Catalog) -> bool:
    """Whether the catalog gets the module at all (it has a teed row)."""
    return any(row.logger_key is not None for _f, row in catalog.rows())


def generated_names(catalog: Catalog) -> list[Claim]:
    """Every name the module binds (its own first) and its file in the package; none when
    the catalog gets no module. ``validate`` checks them (:func:`.names.name_clashes`)."""
    if not _renders(catalog):
        return []
    claims = [Claim(PACKAGE, MODULE, "the module of the W&B definitions")]
    claims += own_names(MODULE, _OWN, exported=False)
    loops = catalog.loops()
    if not loops:
        own = [
            (name, "the definitions of a catalog without loops") for name in _loop_names(_NO_LOOP)
        ]
        return claims + own_names(MODULE, own, exported=False)
    for loop in loops:
        origin = f"loop {loop.name!r} (its W&B definitions)"
        claims += [Claim(MODULE, name, origin, loop.position) for name in _loop_names(loop.name)]
    return claims


def _loop_block(name: str, loop: Loop | None, rows: list[MetricRow]) -> str:
    constant, function = _loop_names(name)
    entries = "\n".join(_entry(*metric) for metric in wandb_metrics(rows, loop))
    body = f"(\n{entries}\n)" if entries else "()"
    default = "None"
    return (
        f"\n{constant}: Final[tuple[WandbMetric, ...]] = {body}\n"
        f'"""The W&B metric definitions of loop {name}, by key."""\n\n\n'
        + _call(
            "",
            f"def {function}",
            ["run: Any", "*", f"step_metric: str | None = {default}"],
            " -> int:",
        )
        + "\n"
        f'    """``run.define_metric`` for every row loop {name} logs; how many W&B took."""\n'
        f"    return define_metrics(run, {constant}, step_metric=step_metric)\n\n"
    )


def render_wandb_module(catalog: Catalog, config: Config | None = None) -> str:
    """The module's text (generated marker first, ``ruff format`` layout)."""
    config = config or Config()
    teed = [row for _f, row in catalog.rows() if row.logger_key is not None]
    loops: list[tuple[str, Loop | None, list[MetricRow]]] = []
    for loop in catalog.loops():
        rows = [row for row in teed if not row.emitted_by or loop.name in row.emitted_by]
        loops.append((loop.name, loop, rows))
    if not loops:
        loops.append((_NO_LOOP, None, teed))
    blocks = "".join(_loop_block(name, loop, rows) for name, loop, rows in loops)
    table = "".join(f"    {py_str(name)}: {_loop_names(name)[0]},\n" for name, _a, _r in loops)
    return (
        f"# {marker_line(config.generate_command, 'the catalog')}\n"
        f'"""W&B metric definitions of each training loop, from the catalog.\n\n'
        "Call ``define_<loop>(run)`` once after ``wandb.init`` (see\n"
        ':mod:`metric_catalog.wandb_setup`)."""\n\n'
        "from __future__ import annotations\n\n"
        "from typing import Any, Final\n\n"
        "from metric_catalog.wandb_setup import WandbMetric, define_metrics\n"
        f"{blocks}\n"
        f"LOOPS: Final[dict[str, tuple[WandbMetric, ...]]] = {{\n{table}}}\n"
        '"""Each loop\'s definitions, by loop name."""\n\n\n'
        "def define_loop(run: Any, loop: str, *, step_metric: str | None = None) -> int:\n"
        '    """``run.define_metric`` for every row ``loop`` logs.\n\n'
        "    Raises:\n"
        "        KeyError: ``loop`` is not declared (the message lists the declared ones).\n"
        '    """\n'
        "    if loop not in LOOPS:\n"
        "        msg = f\"unknown loop {loop!r}; declared: {', '.join(sorted(LOOPS))}\"\n"
        "        raise KeyError(msg)\n"
        "    return define_metrics(run, LOOPS[loop], step_metric=step_metric)\n"
    )


def render_wandb(catalog: Catalog, config: Config | None = None) -> dict[str, str]:
    """``<package-dir>/wandb_metrics.py`` -> its text, when the catalog has teed rows.

    Raises:
        ValueError: a catalog file's module is named ``wandb_metrics`` too.
    """
    config = config or Config()
    if not _renders(catalog):
        return {}
    for catalog_file in catalog.files:
        if catalog_file.module == MODULE:
            msg = (
                f"{catalog_file.path}: module {MODULE!r} is the generated W&B definitions' "
                "name; give the catalog file another module name"
            )
            raise ValueError(msg)
    return {f"{config.package_dir}/{MODULE}.py": render_wandb_module(catalog, config)}
