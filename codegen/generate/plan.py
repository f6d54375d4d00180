"""Everything ``make generate`` writes, as one plan: :func:`render_all` and :func:`plan_changes`.

The renderers contribute: Python registration modules
(:mod:`codegen.generate.python`) and each loop's W&B definitions
(:mod:`codegen.generate.wandb`), docs pages (:mod:`codegen.generate.docs`),
Grafana dashboards (:mod:`codegen.generate.dashboards`) with their Prometheus rules
(:mod:`codegen.generate.alerts`), a project's template outputs
and the schema copy editors read (:mod:`codegen.generate.schema_file`). Each returns repo-relative
path -> text; this module merges them, checks each file lands in a folder it
manages and carries the generated marker, and works out what to write and
what to remove. ``generate`` and ``check`` share it, so they cannot disagree.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from ..catalog.diagnostics import Diagnostic, Severity, format_diagnostics, has_errors
from ..catalog.model import Catalog
from ..catalog.pipeline import gc_paused, load_and_check
from ..config import Config, config_for_root
from .alerts import render_alerts
from .dashboards import render_dashboards
from .docs import generated_names as docs_generated_names
from .docs import render_docs_pages
from .names import name_clashes
from .outputs import render_template_outputs
from .python import generated_names as python_generated_names
from .python import module_name_diagnostics, render_python_modules
from .schema_file import render_schema_file, schema_file_path
from .templating import TemplateOutputError, TemplateSandboxError
from .wandb import generated_names as wandb_generated_names
from .wandb import render_wandb
from .writer import FileChange, HandWrittenFileError, compute_changes, is_generated

__all__ = [
    "RENDERERS",
    "PlanError",
    "PlanResult",
    "Planned",
    "generation_diagnostics",
    "load_plan",
    "plan_changes",
    "plan_project",
    "render_all",
]

MANAGED_DIRS: Final[tuple[str, ...]] = Config().managed_dirs
"""The default configuration's generated folders (a project's: :attr:`Config.managed_dirs`)."""

RENDERERS: Final[tuple[tuple[str, Callable[[Catalog, Config], dict[str, str]]], ...]] = (
    ("render_python_modules", render_python_modules),
    ("render_wandb", render_wandb),
    ("render_docs_pages", render_docs_pages),
    ("render_dashboards", render_dashboards),
    ("render_alerts", render_alerts),
    ("render_template_outputs", render_template_outputs),
    ("render_schema_file", render_schema_file),
)
"""Every renderer that contributes to the plan, by name (named in error messages)."""


# The built-in renderers write their JSON files with json.dumps, so that text is valid
# JSON by construction; when its top-level object opens with the "__generated__" key,
# that is the marker, without parsing megabytes again (is_generated parses the whole
# text, ~0.3 s for a 10,000-row catalog.json and its dashboards). Anything else,
# and every other renderer's output, goes through is_generated.
_JSON_BY_CONSTRUCTION: Final[frozenset[Callable[[Catalog, Config], dict[str, str]]]] = frozenset(
    {render_docs_pages, render_dashboards, render_schema_file}
)
_MARKER_FIRST_KEY: Final = re.compile(r'\{\s*"__generated__"\s*:')


def _marked(render: Callable[[Catalog, Config], dict[str, str]], text: str) -> bool:
    """Whether ``text`` (rendered by ``render``) carries the generated marker."""
    if render in _JSON_BY_CONSTRUCTION and _MARKER_FIRST_KEY.match(text):
        return True
    return is_generated(text)


class PlanError(ValueError):
    """A renderer produced a file the plan cannot own: outside the folders, unmarked, or twice."""


def _managed(path: str, managed_dirs: tuple[str, ...]) -> bool:
    return any(path.startswith(f"{directory}/") for directory in managed_dirs)


def render_all(catalog: Catalog, config: Config | None = None) -> dict[str, str]:
    """Root-relative POSIX path -> full text of every generated file, sorted by path.

    Raises:
        PlanError: A renderer returned a path outside the configured folders
            (:attr:`Config.managed_dirs`), the same path as another renderer,
            or a file without the generated marker (which a later run could
            neither update nor remove).
        ValueError: A renderer refused the catalog or a template failed; the
            message says which.
    """
    config = config or Config()
    managed_dirs = config.managed_dirs
    # The schema copy sits among the hand-written catalog files: that one path is
    # owned, never its folder (stale removal must not sweep the catalog).
    schema_path = schema_file_path(config)
    plan: dict[str, str] = {}
    owners: dict[str, str] = {}
    for renderer_name, render in RENDERERS:
        for path, text in render(catalog, config).items():
            owned = _managed(path, managed_dirs) or (
                renderer_name == "render_schema_file" and path == schema_path
            )
            if not owned or ".." in path.split("/"):
                msg = (
                    f"{renderer_name} returned {path!r}, outside the generated folders "
                    f"({', '.join(managed_dirs)}); return a path inside one of them"
                )
                raise PlanError(msg)
            if path in plan:
                msg = f"{renderer_name} and {owners[path]} both render {path!r}; keep one"
                raise PlanError(msg)
            if not _marked(render, text):
                msg = (
                    f"{renderer_name} rendered {path!r} without the generated marker; start "
                    "it with a 'Code generated by make generate from ... DO NOT EDIT.' line "
                    "('<!-- ... -->' in Markdown) or, for JSON, a top-level \"__generated__\" key"
                )
                raise PlanError(msg)
            plan[path] = text
            owners[path] = renderer_name
    return dict(sorted(plan.items()))


def generation_diagnostics(catalog: Catalog) -> list[Diagnostic]:
    """Findings only generation can make: a module name Python cannot import, and names
    the generated outputs would bind twice (each output's :class:`.names.Claim` rows, read
    together so an owner module named ``wandb_metrics`` meets the W&B one, and one named
    ``index`` the docs index page).
    ``validate`` and ``lint`` report them too, so a catalog they pass generates."""
    claims = [
        *python_generated_names(catalog),
        *wandb_generated_names(catalog),
        *docs_generated_names(catalog),
    ]
    return [*module_name_diagnostics(catalog), *name_clashes(claims)]


def load_plan(config: Config | Path) -> tuple[dict[str, str] | None, list[Diagnostic]]:
    """Load, validate and lint the configured catalog, then render: (plan, diagnostics).

    A bare ``Path`` stands for the project there (its table, else the defaults). The plan
    is ``None`` when any diagnostic is an error, so nothing gets written from a
    catalog that failed its checks.

    Raises:
        PlanError: See :func:`render_all`.
        NoCatalogError: No catalog file at all: rendering it would delete every
            generated file, which is never what a wrong ``--root`` means.
    """
    if isinstance(config, Path):
        config = config_for_root(config)
    # Loading builds a few hundred thousand live objects and rendering walks them: an
    # automatic collection anywhere in between would traverse them all for nothing
    # (~0.15 s of a 10,000-row generate). Reference counting frees as usual.
    with gc_paused():
        return _load_and_render(config)


def _load_and_render(config: Config) -> tuple[dict[str, str] | None, list[Diagnostic]]:
    """:func:`load_plan` for a resolved configuration."""
    result = load_and_check(config.catalog_files(), root=config.root)
    diagnostics = [*result.diagnostics, *generation_diagnostics(result.catalog)]
    if has_errors(diagnostics):
        return None, diagnostics
    try:
        return render_all(result.catalog, config), diagnostics
    except TemplateSandboxError:
        raise  # a ConfigError: refused with exit 2, not a finding about the catalog
    except TemplateOutputError as exc:
        return None, [*diagnostics, Diagnostic("TEMPLATE", Severity.ERROR, str(exc))]


def plan_changes(
    config: Config | Path, plan: Mapping[str, str]
) -> tuple[list[FileChange], list[str]]:
    """What must change under the root to match ``plan`` (see :func:`.writer.compute_changes`)."""
    if isinstance(config, Path):
        config = config_for_root(config)
    return compute_changes(config.root, plan, config.managed_dirs)


@dataclass(frozen=True, slots=True)
class Planned:
    """A rendered plan and how it differs from the files under the root."""

    plan: dict[str, str]
    """Every generated file's path and full text."""
    changes: list[FileChange]
    """What must be written or removed to match the plan."""
    unchanged: list[str]
    """Planned paths whose bytes are already current."""
    report: str
    """The diagnostics (warnings only) printed while planning."""


@dataclass(frozen=True, slots=True)
class PlanResult:
    """What planning a project found; :func:`codegen.commands.plan_or_report` prints it.

    ``planned`` is ``None`` when the plan cannot be applied: the catalog has
    errors (among ``diagnostics``), or ``error`` says why (a renderer bug, or a
    hand-written file where output would go).
    """

    planned: Planned | None
    diagnostics: tuple[Diagnostic, ...]
    """The catalog's and the generation's diagnostics, warnings included."""
    error: str | None = None
    """Why the plan was refused, when it was not for the catalog's errors."""


def plan_project(config: Config) -> PlanResult:
    """Load, render and diff the project against its root; nothing is printed or written."""
    diagnostics: list[Diagnostic] = []
    try:
        plan, diagnostics = load_plan(config)
        if plan is None:
            return PlanResult(None, tuple(diagnostics))
        changes, unchanged = plan_changes(config, plan)
    except (PlanError, HandWrittenFileError) as exc:
        return PlanResult(None, tuple(diagnostics), str(exc))
    report = format_diagnostics(diagnostics) if diagnostics else ""
    return PlanResult(Planned(plan, changes, unchanged, report), tuple(diagnostics))
