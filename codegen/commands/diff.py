"""``python -m codegen diff --against REF``: what changed since a baseline, and what breaks.

The baseline is a git ref (``main``, ``origin/main``, ``v0.3.0``, a commit, or
``origin/main...`` for the merge base of that branch and ``HEAD``) whose
``catalog/*.yaml`` are read with ``git ls-tree`` and ``git cat-file``, or a
directory: a checkout holding ``catalog/``, or a catalog directory itself, or an
OpenTelemetry Weaver registry folder (it has a ``manifest.yaml``), imported on the
fly (:mod:`codegen.weaver`) so a catalog is held to a published registry.
Either way the files are copied into a temporary directory and loaded like the
working tree, so both sides go through the same loader. From a directory only
regular files are copied: a FIFO is never opened, and a device, a folder named
``x.yaml``, a symlink loop or a symlink leading outside the directory is skipped
with one warning line each.
"""

from __future__ import annotations

import argparse
import errno
import itertools
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path, PurePosixPath

from ..catalog.diagnostics import Position, Severity, format_diagnostics, has_errors
from ..catalog.loader import MAX_FILE_BYTES
from ..catalog.pipeline import load_and_check
from ..config import Config
from ..diff import diff_catalogs
from ..safe_fs import is_within, read_regular
from ..weaver.importer import import_registry
from ..weaver.registry import MANIFEST_NAMES, load_registry
from . import (
    add_format_argument,
    add_no_warnings_argument,
    add_root_argument,
    config_from_args,
    load_or_report,
)

__all__ = [
    "HELP",
    "BaselineError",
    "catalog_folders",
    "configure",
    "materialize_baseline",
    "run",
]

HELP = "Compare the catalog with a baseline (git ref or directory); exit 1 on breaking changes."


class BaselineError(ValueError):
    """The ``--against`` baseline cannot be read."""


def _git(root: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(["git", "-C", str(root), *args], capture_output=True, check=False)


def _merge_base(spec: str, root: Path) -> str:
    """``A...B`` (B defaults to HEAD) -> the commit id of their merge base."""
    left, _, right = spec.partition("...")
    found = _git(root, "merge-base", left or "HEAD", right or "HEAD")
    if found.returncode != 0:
        msg = (
            f"--against {spec!r}: git merge-base {left or 'HEAD'} {right or 'HEAD'} found no "
            "common ancestor; check both refs exist (fetch the branch first)"
        )
        raise BaselineError(msg)
    return found.stdout.decode().strip()


def _from_git(
    ref: str, root: Path, dest: Path, catalog_dirs: Sequence[str]
) -> Callable[[Position], Position]:
    if "..." in ref:
        ref = _merge_base(ref, root)
    if _git(root, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}").returncode != 0:
        msg = (
            f"--against {ref!r} is neither a directory nor a git commit in {root}; "
            "pass a branch, tag or commit (e.g. origin/main) or a directory holding catalog/"
        )
        raise BaselineError(msg)
    # Without --full-name, paths are relative to the project root (git -C root).
    pathspecs = [f"{d}/" if d else "." for d in catalog_dirs]
    listing = _git(root, "ls-tree", "--name-only", ref, "--", *pathspecs)
    if listing.returncode != 0:
        msg = f"git ls-tree {ref} failed: {listing.stderr.decode(errors='replace').strip()}"
        raise BaselineError(msg)
    names = [name for name in listing.stdout.decode().splitlines() if name.endswith(".yaml")]
    if not names:
        shown = ", ".join(f"{d}/*.yaml" if d else "*.yaml" for d in catalog_dirs)
        msg = (
            f"--against {ref!r}: commit {ref} has no {shown} under {root}, so there is "
            "nothing to compare with (every row would look added); check the ref and --root "
            "(the directory holding catalog/), or skip the diff until the catalog exists there"
        )
        raise BaselineError(msg)
    for name in names:
        blob = _git(root, "cat-file", "blob", f"{ref}:./{name}")
        if blob.returncode != 0:
            msg = f"cannot read {ref}:{name}: {blob.stderr.decode(errors='replace').strip()}"
            raise BaselineError(msg)
        target = dest / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(blob.stdout)
    return lambda p: replace(p, path=f"{ref}:{p.path}")


def _baseline_bytes(path: Path, source: Path) -> bytes | None:
    """The bytes of a baseline catalog file, or ``None`` after a warning saying why it is skipped.

    Only a regular file inside ``source`` (following symlinks) is read; a FIFO
    is never opened for reading (it would block), a device never read.
    """
    shown = path.as_posix()
    try:
        real = os.path.realpath(path, strict=True)
    except OSError as exc:
        reason = "a symlink loop" if exc.errno == errno.ELOOP else "a dangling symlink"
        print(f"warning: --against: {shown} is {reason}; skipped", file=sys.stderr)
        return None
    if not is_within(real, os.path.realpath(source)):
        print(
            f"warning: --against: {shown} is a symlink to {real}, outside {source}; refused",
            file=sys.stderr,
        )
        return None
    try:
        return read_regular(path, MAX_FILE_BYTES)
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        print(f"warning: --against: {shown} {_as_clause(reason)}; skipped", file=sys.stderr)
        return None


def _as_clause(reason: str) -> str:
    """``is a FIFO ...`` stays; an OS message becomes ``cannot be read (<reason>)``."""
    return reason if reason.startswith("is ") else f"cannot be read ({reason})"


def _copy_folder(folder: Path, source: Path, target: Path) -> int:
    """Copy ``folder``'s readable ``*.yaml`` files into ``target``; how many were copied."""
    copied = 0
    for path in sorted(folder.glob("*.yaml")):
        data = _baseline_bytes(path, source)
        if data is None:
            continue
        target.mkdir(parents=True, exist_ok=True)
        (target / path.name).write_bytes(data)
        copied += 1
    return copied


def _nothing_to_compare(source: Path, where: str) -> BaselineError:
    msg = (
        f"--against {source}: the directory holds {where}, so there is nothing to "
        "compare with (every row would look added); pass a checkout root or its "
        "catalog/ directory"
    )
    return BaselineError(msg)


def _from_directory(
    source: Path, dest: Path, catalog_dirs: Sequence[str]
) -> Callable[[Position], Position]:
    first = catalog_dirs[0] if catalog_dirs else "catalog"
    checkout = all((source / d).is_dir() for d in catalog_dirs)
    if checkout and any(any((source / d).glob("*.yaml")) for d in catalog_dirs):
        copied = sum(_copy_folder(source / d, source, dest / d) for d in catalog_dirs)
        if not copied:
            raise _nothing_to_compare(source, "catalog folders without a readable *.yaml file")
        return lambda p: replace(p, path=(source / p.path).as_posix())
    catalog_dir = source / first if (source / first).is_dir() else source
    if not _copy_folder(catalog_dir, source, dest / first):
        where = (
            "neither catalog/ nor *.yaml files"
            if catalog_dir == source
            else ("a catalog/ directory without *.yaml files")
        )
        raise _nothing_to_compare(source, where)
    return lambda p: replace(p, path=(catalog_dir / Path(p.path).name).as_posix())


def _from_registry(
    source: Path, dest: Path, catalog_dirs: Sequence[str]
) -> Callable[[Position], Position]:
    """An OpenTelemetry Weaver registry (a folder with a manifest), imported on the fly.

    Names without ``rl.`` get it, as ``import weaver --prefix rl.`` gives them, so a
    catalog started from the registry is compared with it name for name.
    """
    registry = load_registry(source)
    result = import_registry(registry, prefix="rl.")
    found = [*registry.diagnostics, *result.diagnostics]
    if found:
        print(format_diagnostics(found), file=sys.stderr)
    if has_errors(found) or not result.files:
        msg = (
            f"--against {source}: the Weaver registry does not import cleanly (see above); "
            "fix it, or diff against a catalog folder or a git ref"
        )
        raise BaselineError(msg)
    folder = dest / (catalog_dirs[0] if catalog_dirs else "catalog")
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in result.files.items():
        (folder / name).write_text(text, encoding="utf-8")
    return lambda p: replace(
        p, path=f"{source.as_posix()} (imported as {Path(p.path).name})", line=0, column=0
    )


def catalog_folders(config: Config) -> tuple[str, ...]:
    """The folders the configured catalog entries live in (the part before any pattern)."""
    folders = []
    for entry in config.catalog:
        parts = PurePosixPath(entry).parts
        static = list(itertools.takewhile(lambda p: not any(c in p for c in "*?["), parts))
        if len(static) == len(parts) and entry.endswith(".yaml"):
            static = static[:-1]
        folders.append(PurePosixPath(*static).as_posix() if static else "")
    return tuple(dict.fromkeys(folder if folder != "." else "" for folder in folders))


def materialize_baseline(
    against: str, root: Path, dest: Path, catalog_dirs: Sequence[str] = ("catalog",)
) -> Callable[[Position], Position]:
    """Copy the baseline's catalog files under ``dest``, at their root-relative paths.

    ``catalog_dirs`` are the project's catalog folders (root-relative). Returns
    how baseline positions should be shown (``REF:catalog/x.yaml`` or the
    original directory's path).

    Raises:
        BaselineError: ``against`` is neither a directory nor a commit, git
            cannot read it, or it holds no catalog file (a wrong ref or root
            would otherwise report every row as added).
    """
    source = Path(against)
    if source.is_dir() and any((source / name).is_file() for name in MANIFEST_NAMES):
        return _from_registry(source, dest, catalog_dirs)
    if source.is_dir():
        return _from_directory(source, dest, catalog_dirs)
    return _from_git(against, root, dest, catalog_dirs)


def configure(parser: argparse.ArgumentParser) -> None:
    """Add ``--against``, ``--format``, ``--no-warnings`` and ``--root``."""
    parser.add_argument(
        "--against",
        required=True,
        metavar="REF_OR_DIR",
        help=(
            "baseline: a git ref (branch, tag, commit; A...B or A... for a merge base), "
            "a directory holding catalog/, or a Weaver registry folder (with manifest.yaml)"
        ),
    )
    add_format_argument(parser)
    add_no_warnings_argument(parser)
    add_root_argument(parser)


def run(args: argparse.Namespace) -> int:
    """Print the diff report; 1 on a breaking change or an invalid catalog, 2 on a bad baseline.

    A working tree without catalog files (a wrong ``--root``) is a usage error (2) too.
    """
    config = config_from_args(args)
    root = config.root
    catalog = load_or_report(config, warnings=not args.no_warnings)
    if catalog is None:
        print("error: the working catalog has errors; fix them before diffing", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory(prefix="catalog-baseline-") as tmp:
        try:
            folders = catalog_folders(config)
            to_report = materialize_baseline(args.against, root, Path(tmp), folders)
        except BaselineError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        base = Path(tmp).resolve()
        loaded = load_and_check(sorted(base.rglob("*.yaml")), root=base, lint=False)
    shown = [
        replace(d, position=to_report(d.position)) if d.position else d
        for d in loaded.diagnostics
        if not args.no_warnings or d.severity is Severity.ERROR
    ]
    if shown:
        print(format_diagnostics(shown), file=sys.stderr)
    if not loaded.ok:
        print(
            f"error: the baseline catalog at {args.against} does not load with this schema; "
            "pick another baseline, or diff against a directory with those files fixed",
            file=sys.stderr,
        )
        return 2
    baseline = loaded.catalog
    report = diff_catalogs(baseline, catalog, against=args.against, baseline_position=to_report)
    print(report.to_json() if args.format == "json" else report.to_text())
    return 1 if report.breaking else 0
