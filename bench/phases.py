"""Where ``generate``'s time goes, phase by phase, without a profiler's overhead.

``python -m bench.phases ROOT`` runs what ``python -m codegen generate`` runs,
once, in this fresh interpreter, timing each phase with ``perf_counter`` and
printing one JSON object (phase -> seconds). The phases call the same public
functions the CLI does (``load_file``, ``check_schema``, ``load_and_check``,
``lint_catalog``, the three renderers, ``compute_changes``/``apply_changes``),
so their sum is close to the CLI's wall time minus interpreter start-up.
cProfile multiplies the cost of small Python calls several times over; this
table is the one to read for proportions, the profile for call sites.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

__all__ = ["PHASES", "main"]

PHASES: tuple[str, ...] = (
    "import codegen (yaml, jsonschema, jinja2)",
    "YAML load (loader.load_file)",
    "schema check (schema_check.check_schema)",
    "build rows + cross-file checks",
    "lints (lints.lint_catalog)",
    "render Python modules",
    "render docs pages",
    "render dashboards",
    "compare with disk + write (writer)",
)
"""Phase names, in pipeline order."""

_T = TypeVar("_T")


def main(argv: Sequence[str] | None = None) -> int:
    """Time each phase of a full generate into ROOT; print JSON."""
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 1 or args[0].startswith("-") or not (Path(args[0]) / "catalog").is_dir():
        print(
            "usage: python -m bench.phases ROOT  (ROOT holds catalog/*.yaml; its generated "
            "folders are written)",
            file=sys.stderr,
        )
        return 2
    root = Path(args[0])
    times: dict[str, float] = {}

    def timed(phase: str, fn: Callable[[], _T]) -> _T:
        start = time.perf_counter()
        result = fn()
        times[phase] = times.get(phase, 0.0) + time.perf_counter() - start
        return result

    def imports() -> Any:
        from codegen.catalog import pipeline
        from codegen.catalog.lints import lint_catalog
        from codegen.catalog.loader import YMap, load_file
        from codegen.catalog.schema_check import check_schema
        from codegen.generate import plan as generate
        from codegen.generate import writer
        from codegen.generate.dashboards import render_dashboards
        from codegen.generate.docs import render_docs_pages
        from codegen.generate.python import render_python_modules

        return (
            generate,
            pipeline,
            writer,
            render_dashboards,
            lint_catalog,
            YMap,
            load_file,
            render_docs_pages,
            render_python_modules,
            check_schema,
        )

    (
        generate,
        pipeline,
        writer,
        render_dashboards,
        lint_catalog,
        ymap,
        load_file,
        render_docs_pages,
        render_python_modules,
        check_schema,
    ) = timed(PHASES[0], imports)
    paths = pipeline.default_paths(root)
    loaded = timed(PHASES[1], lambda: [load_file(p, pipeline.display_path(p, root)) for p in paths])
    timed(PHASES[2], lambda: [check_schema(f.root) for f in loaded if isinstance(f.root, ymap)])
    # load_and_check repeats load and schema; subtract them to get build + cross-file.
    start = time.perf_counter()
    result = pipeline.load_and_check(root=root, lint=False)
    whole = time.perf_counter() - start
    times[PHASES[3]] = max(0.0, whole - times[PHASES[1]] - times[PHASES[2]])
    if not result.ok:
        print(json.dumps({"error": "the catalog did not validate"}))
        return 1
    catalog = result.catalog
    timed(PHASES[4], lambda: lint_catalog(catalog))
    plan: dict[str, str] = {}
    plan.update(timed(PHASES[5], lambda: render_python_modules(catalog)))
    plan.update(timed(PHASES[6], lambda: render_docs_pages(catalog)))
    plan.update(timed(PHASES[7], lambda: render_dashboards(catalog)))

    def write() -> None:
        changes, _ = writer.compute_changes(root, plan, generate.MANAGED_DIRS)
        writer.apply_changes(root, changes)

    timed(PHASES[8], write)
    print(json.dumps(times))
    return 0


if __name__ == "__main__":
    sys.exit(main())
