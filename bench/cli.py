"""``python -m bench [--smoke] [--only NAME ...] [--baseline-ref REF]``: run the benchmarks.

A full run rewrites ``bench/RESULTS.md``; ``--smoke`` runs each benchmark on a
tiny catalog once (about a second each), makes no timing claims and writes
nothing outside ``bench/out/``. The exit code is 0 only when every selected
benchmark ran; glean_parser missing (offline) only skips the glean rows.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import shutil
import sys
import time
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Final

from bench.config import Config, redact_paths, roots_dir
from bench.docs_bench import bench_docs
from bench.emit_bench import bench_emit
from bench.families_bench import bench_families
from bench.gen_bench import bench_generate, bench_noop, bench_scaling
from bench.glean import GleanEnv, ensure_glean
from bench.import_bench import bench_import
from bench.infer_bench import bench_infer
from bench.live_bench import bench_live
from bench.measure import REPO, BenchError
from bench.outputs_bench import bench_outputs
from bench.report import (
    Section,
    machine_description,
    merge_results,
    render_results,
    render_section,
)
from bench.sandbox_bench import bench_sandbox
from bench.scan_bench import bench_scan
from bench.tee_bench import bench_tee
from bench.workers_bench import bench_workers

__all__ = ["BENCHMARKS", "RESULTS", "main"]

BENCHMARKS: Final[dict[str, tuple[str, Callable[[Config], Section]]]] = {
    "generate": ("1. Full generate vs glean_parser", bench_generate),
    "noop": ("2. No-op regenerate vs full generate", bench_noop),
    "tee": ("3. Tee per log_metrics call", bench_tee),
    "import": ("4. Import cost", bench_import),
    "scaling": ("5. Scaling of generate", bench_scaling),
    "workers": ("6. Many workers", bench_workers),
    "docs": ("7. Docs site at 10,000 rows", bench_docs),
    "live": ("8. live-check throughput", bench_live),
    "sandbox": ("9. Sandboxed templates", bench_sandbox),
    "scan": ("10. Source scan vs a bare ast.parse pass", bench_scan),
    "infer": ("11. infer vs live-check over the same log", bench_infer),
    "outputs": ("12. Generated output size per row", bench_outputs),
    "emit": ("13. emit over sum_of shapes", bench_emit),
    "families": ("14. live-check over many key families", bench_families),
}
"""Benchmark name -> (title, function), in report order."""

RESULTS: Final = REPO / "bench" / "RESULTS.md"
ANALYSIS: Final = REPO / "bench" / "ANALYSIS.md"


def _loadavg() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "unknown"


def main(argv: Sequence[str] | None = None) -> int:
    """Run the selected benchmarks; return 0 only if all of them ran."""
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument("--smoke", action="store_true", help="tiny sizes, one run, no claims")
    parser.add_argument(
        "--only", nargs="+", choices=sorted(BENCHMARKS), default=None, help="run only these"
    )
    parser.add_argument(
        "--no-write", action="store_true", help="do not rewrite bench/RESULTS.md (full runs)"
    )
    parser.add_argument(
        "--merge",
        action="store_true",
        help="with --only: replace those sections (and their targets) in bench/RESULTS.md",
    )
    parser.add_argument(
        "--baseline-ref",
        metavar="REF",
        default=None,
        help="git ref whose commands this checkout's are compared with (default: the"
        " merge-base with main)",
    )
    parser.add_argument(
        "--redact-results",
        action="store_true",
        help="only rewrite bench/RESULTS.md with absolute machine paths redacted (no run)",
    )
    args = parser.parse_args(argv)
    if args.redact_results:
        text = RESULTS.read_text(encoding="utf-8")
        RESULTS.write_text(redact_paths(text), encoding="utf-8")
        print(f"bench: redacted {RESULTS.relative_to(REPO)}")
        return 0
    load_before = _loadavg()
    glean = ensure_glean()
    if not isinstance(glean, GleanEnv):
        print(f"bench: NOTE: glean_parser rows will be skipped: {glean}", flush=True)
    cfg = Config.smoke_run(glean) if args.smoke else Config.full(glean)
    cfg = dataclasses.replace(cfg, baseline_ref=args.baseline_ref)
    names = args.only or list(BENCHMARKS)
    sections: list[Section] = []
    failed: list[str] = []
    for name in names:
        title, fn = BENCHMARKS[name]
        print(f"bench: running {name} ...", flush=True)
        start = time.perf_counter()
        try:
            section = fn(cfg)
        except (BenchError, Exception) as exc:  # noqa: BLE001 - report every failure, go on
            detail = str(exc) if isinstance(exc, BenchError) else traceback.format_exc()
            section = Section(key=name, title=title, intro="", failed=detail)
            failed.append(name)
        section.notes.append(f"Benchmark took {time.perf_counter() - start:.1f} s.")
        sections.append(section)
        print(render_section(section, profiles=False), flush=True)
    shutil.rmtree(roots_dir(cfg), ignore_errors=True)  # keep sources and profiles
    glean_version = glean.version if isinstance(glean, GleanEnv) else None
    machine = machine_description(glean_version, load_before, _loadavg())
    if not args.smoke and not args.no_write and args.only is None:
        analysis = ANALYSIS.read_text(encoding="utf-8") if ANALYSIS.is_file() else None
        RESULTS.write_text(
            render_results(sections, machine, analysis, "make bench"), encoding="utf-8"
        )
        print(f"bench: wrote {RESULTS.relative_to(REPO)}")
    elif not args.smoke and args.merge and args.only is not None and not failed:
        RESULTS.write_text(
            merge_results(RESULTS.read_text(encoding="utf-8"), sections, machine), encoding="utf-8"
        )
        print(f"bench: merged {', '.join(args.only)} into {RESULTS.relative_to(REPO)}")
    elif not args.smoke:
        out = REPO / "bench" / "out" / "RESULTS.partial.md"
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(render_results(sections, machine, None, "python -m bench"), "utf-8")
        print(f"bench: wrote {out.relative_to(REPO)} (partial run; RESULTS.md untouched)")
    if failed:
        print(f"bench: FAILED: {', '.join(failed)} did not run", file=sys.stderr)
        return 1
    print("bench: every benchmark ran" + (" (smoke: no timing claims)" if args.smoke else ""))
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    sys.exit(main())
