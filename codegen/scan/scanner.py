"""Scan source files and judge what they log: the engine behind ``metric-catalog scan``.

See :mod:`codegen.scan` for what is read and reported.
"""

from __future__ import annotations

import ast
import contextlib
import dataclasses
import errno
import gc
import json
import os
import symtable
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Final

from ..catalog.diagnostics import Diagnostic, Position, Severity, format_diagnostics
from ..safe_fs import is_within, read_input
from ..safe_text import shown as escaped
from .cache import CachedReport, ScanCache, digest
from .calls import DEFAULT_SCAN_CALLS, ScanCall
from .candidates import Candidate, candidates
from .findings import SYNTAX, UNREADABLE

if TYPE_CHECKING:  # the analysis loads when a report is not cached (see _scan)
    from ..catalog.model import Catalog
    from .extract import Project
    from .model import Logged
    from .sources import Module

__all__ = [
    "FEW_CALLS",
    "IGNORE_COMMENT",
    "MAX_FILE_BYTES",
    "MAX_FILE_LINES",
    "SKIPPED_DIRS",
    "ScanReport",
    "iter_sources",
    "scan",
]

MAX_FILE_BYTES: Final = 8 * 1024 * 1024
"""Larger files are reported (``SCAN_UNREADABLE``) and skipped: generated data, not code."""

MAX_FILE_LINES: Final = 50_000
"""Files of more lines are reported and skipped too: a syntax tree costs a few hundred
bytes per statement, and the trees the analysis builds are held until the scan ends."""

IGNORE_COMMENT: Final = b"metric-catalog: ignore"
"""A finding on a line holding this text is dropped."""

FEW_CALLS: Final = 3
"""Fewer logging calls recognised than this: the report names candidate calls."""

SKIPPED_DIRS: Final = frozenset(
    {"__pycache__", "node_modules", "site-packages", "venv", "build", "dist"}
)
"""Folders a walk never enters (besides hidden ones such as ``.git`` and ``.venv``)."""


def _shown(path: Path, cwd: Path) -> str:
    """``path`` relative to the working directory when below it (clickable), else absolute;
    escaped (:func:`~codegen.safe_text.shown`), so a name cannot redraw the terminal."""
    try:
        return escaped(path.relative_to(cwd).as_posix())
    except ValueError:
        return escaped(path.as_posix())


def _shown_file(absolute: str, here_text: str, here: Path) -> str:
    """:func:`_shown` of a normalised absolute path (``os.path.abspath``), read from its text
    on POSIX: relative when it starts with ``here_text`` (the working directory with a
    trailing separator), else itself. No ``Path`` is built per file."""
    if os.sep != "/" or absolute.startswith("//"):  # POSIX keeps a leading ``//`` apart
        return _shown(Path(absolute), here)
    if absolute.startswith(here_text):
        return escaped(absolute[len(here_text) :])
    return escaped(absolute)


def iter_sources(paths: Sequence[Path], skip: Sequence[Path] = ()) -> Iterator[tuple[Path, str]]:
    """``(path as walked, real path)`` of each Python file under ``paths``, each real file once.

    A file named directly is scanned whatever its suffix; folders give their
    ``*.py`` files, sorted, without hidden folders, :data:`SKIPPED_DIRS` and
    ``skip`` (the generated package). Symbolic links are followed while they stay
    inside the folder named (a link to a folder outside it is not entered; a file
    link out of it is yielded and refused when read); a folder already entered (by
    its real path) is not entered again.
    """
    seen_files: set[str] = set()
    seen_dirs: set[str] = {os.path.realpath(p) for p in skip}
    for given in paths:
        if not given.is_dir():
            real = os.path.realpath(given)
            if real not in seen_files:
                seen_files.add(real)
                yield given, real
            continue
        real_top = os.path.realpath(given)
        if real_top in seen_dirs:
            continue
        seen_dirs.add(real_top)
        # Each folder walked -> its real path: a file that is no link is its folder's real
        # path plus its name, one ``lstat`` instead of one per component of its path.
        reals = {os.fspath(given): real_top}
        for folder, dirs, files in os.walk(given, followlinks=True):
            kept = []
            for name in sorted(dirs):
                if name.startswith(".") or name in SKIPPED_DIRS:
                    continue
                real = os.path.realpath(os.path.join(folder, name))
                if real in seen_dirs or not is_within(real, real_top):
                    continue  # a link loop, a folder reached twice, or a link out of the tree
                seen_dirs.add(real)
                kept.append(name)
                reals[os.path.join(folder, name)] = real
            dirs[:] = kept
            for name in sorted(files):
                if not name.endswith(".py"):
                    continue
                path = Path(folder, name)
                real = _real_file(path, reals.get(folder))
                if real not in seen_files:
                    seen_files.add(real)
                    yield path, real


def _real_file(path: Path, real_folder: str | None) -> str:
    """``os.path.realpath(path)``, from its folder's real path when ``path`` is no link."""
    if real_folder is None or os.path.islink(path):
        return os.path.realpath(path)
    return os.path.join(real_folder, path.name)


@dataclass(slots=True)
class ScanReport:
    """What a scan found: findings plus counts of what it looked at."""

    diagnostics: list[Diagnostic] = field(default_factory=list)
    files: int = 0
    calls: int = 0
    keys: int = 0
    candidates: list[Candidate] = field(default_factory=list)
    """When few calls were recognised: calls handing a dict of literal keys onward, the
    likeliest first (see :mod:`.candidates`); the text note names them."""

    @property
    def errors(self) -> int:
        """Number of error findings."""
        return sum(d.severity is Severity.ERROR for d in self.diagnostics)

    def summary(self) -> str:
        """``12 file(s), 4 logging call(s), 80 key(s): 1 error(s), 3 warning(s)``."""
        warnings = len(self.diagnostics) - self.errors
        return (
            f"{self.files} file(s), {self.calls} logging call(s), {self.keys} key(s): "
            f"{self.errors} error(s), {warnings} warning(s)"
        )

    def to_text(self) -> str:
        """Findings as ``path:line:col: severity[CODE]: message`` lines."""
        return format_diagnostics(self.diagnostics)

    def to_json(self) -> str:
        """A JSON object: counts and the findings (validate's fields)."""
        ordered = sorted(self.diagnostics, key=Diagnostic.sort_key)
        return json.dumps(
            {
                "files": self.files,
                "calls": self.calls,
                "keys": self.keys,
                "errors": self.errors,
                "warnings": len(ordered) - self.errors,
                "findings": [d.to_json() for d in ordered],
            },
            indent=2,
        )


def _read(path: Path, shown: str, root: tuple[str, str] | None) -> bytes | Diagnostic:
    """The bytes of a source file: a regular file (never a FIFO or a device), inside the
    tree ``root`` when it was reached by walking one, within the size and line caps; else
    the finding saying why it was not scanned.

    ``root``: (the file's real path, the tree's real path), both resolved already (the walk
    resolves every file; the tree once), so the read does not resolve them again.
    """
    try:
        if root is None:
            source = read_input(path, MAX_FILE_BYTES)
        else:
            source = read_input(path, MAX_FILE_BYTES, root=root[1], resolved=root)
    except OSError as exc:
        if exc.errno == errno.EFBIG:
            why = (
                f"over the {MAX_FILE_BYTES}-byte limit of a source file; it was not scanned "
                "(pass it by name after splitting it, or leave it out)"
            )
        else:
            why = f"cannot read: {exc.strerror or exc}; it was not scanned"
        return Diagnostic(UNREADABLE, Severity.WARNING, why, Position(shown))
    lines = source.count(b"\n")
    if lines > MAX_FILE_LINES:
        why = (
            f"{lines} lines, over the {MAX_FILE_LINES}-line limit of a source file; it was "
            "not scanned (generated data, not code?)"
        )
        return Diagnostic(UNREADABLE, Severity.WARNING, why, Position(shown))
    return source


@dataclass(frozen=True, slots=True)
class _Unparsed:
    """Why a file does not parse: its ``SCAN_SYNTAX`` finding."""

    finding: Diagnostic
    lasting: bool
    """A property of the bytes (a syntax error), not of this process (a tree too deep for its
    stack or memory): what the cache may keep."""


def _parse(source: bytes, shown: str) -> ast.Module | _Unparsed:
    lasting = True
    try:
        # Bytes: the parser honours a PEP 263 coding line and rejects bad UTF-8 itself.
        return ast.parse(source, filename=shown)
    except SyntaxError as exc:
        line = exc.lineno or 1
        column = exc.offset or 1
        why = exc.msg
    except ValueError as exc:  # a null byte
        line, column, why = 1, 1, str(exc) or type(exc).__name__
    except (RecursionError, MemoryError) as exc:
        line, column, why = 1, 1, str(exc) or type(exc).__name__
        lasting = False
    message = f"does not parse as Python: {why}; the file was not scanned (the others were)"
    at = Position(shown, max(line, 1), max(column, 1))
    return _Unparsed(Diagnostic(SYNTAX, Severity.ERROR, message, at), lasting)


def _parsed_now(module: Module, report: ScanReport) -> bool:
    """Whether a file calling a logging function parses (its tree is built now; a syntax
    error is reported)."""
    if module.loaded and module.failure is None:  # looked into already (its imports tell
        return True  # ``np.log(`` apart)
    parsed = _parse(module.source, module.shown)
    if isinstance(parsed, _Unparsed):
        report.diagnostics.append(parsed.finding)
        return False
    if not module.loaded:
        module.attach(parsed)
    return True


def _check_syntax(
    modules: Sequence[Module], report: ScanReport, cache: ScanCache | None, digests: dict[str, str]
) -> None:
    """Report the files calling no logging function that do not parse.

    Checked once the analysis is done: it builds the trees of the few it looks into,
    and the others are checked without building one (:func:`syntax_checked`), or not at all
    when the cache knows the verdict on their bytes."""
    for module in modules:
        if module.lines:
            continue  # parsed before the analysis
        file_digest = digests.get(module.real) if cache is not None else None
        if module.loaded and module.failure is None:
            if cache is not None and file_digest is not None:
                cache.remember_parse(file_digest, None)
            continue
        if not module.loaded and cache is not None and file_digest is not None:
            known = cache.parse_finding(file_digest)
            if known is not False:
                if known is not None:
                    line, column, message = known
                    at = Position(module.shown, line, column)
                    report.diagnostics.append(Diagnostic(SYNTAX, Severity.ERROR, message, at))
                continue
        verdict: _Unparsed | None = None
        if module.loaded or not syntax_checked(module.source):
            parsed = _parse(module.source, module.shown)  # the finding, or it parses after all
            verdict = parsed if isinstance(parsed, _Unparsed) else None
        if verdict is not None:
            report.diagnostics.append(verdict.finding)
        if cache is None or file_digest is None or (verdict is not None and not verdict.lasting):
            continue
        if verdict is None:
            cache.remember_parse(file_digest, None)
        else:
            at = verdict.finding.position or Position(module.shown, 1, 1)
            cache.remember_parse(file_digest, (at.line, at.column, verdict.finding.message))


def syntax_checked(source: bytes) -> bool:
    """Whether ``source`` parses, checked without building its syntax tree (``False`` may
    still parse: :func:`symtable.symtable` refuses a few scoping errors a parse accepts)."""
    try:
        symtable.symtable(source, "<scan>", "exec")  # type: ignore[arg-type]
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


def scan(
    paths: Sequence[Path],
    catalog: Catalog | Callable[[], Catalog],
    calls: Sequence[ScanCall] = DEFAULT_SCAN_CALLS,
    *,
    skip: Sequence[Path] = (),
    cwd: Path | None = None,
    root: Path | None = None,
    unlogged: bool = True,
    cache: ScanCache | None = None,
) -> ScanReport:
    """Scan the Python files under ``paths`` and judge what they log against ``catalog``.

    ``skip`` lists folders not to enter (the generated package); paths in
    findings are relative to ``cwd`` (default: the working directory) when
    below it, and so are catalog rows (their paths are relative to ``root``,
    the project root). ``unlogged=False`` leaves out the ``SCAN_UNLOGGED`` warnings.

    ``cache`` (see :mod:`.cache`; its ``context`` must name the catalog) keeps what scan
    learnt of each file's bytes and the whole report: a scan of unchanged inputs reads the
    files and parses none. ``catalog`` may be a function loading it, then called only when
    the report is not cached.
    """
    with _gc_paused():
        return _scan(
            paths,
            catalog,
            calls,
            skip=skip,
            here=(cwd or Path.cwd()).resolve(),
            root=root,
            unlogged=unlogged,
            cache=cache,
        )


def _unjudged(logged: Logged, judged: set[tuple[object, ...]]) -> Logged:
    """``logged`` without the keys an earlier call handed over under the same prefixes: their
    findings differ only in the call named, and the first is kept (see :func:`_scan`). A
    class of n methods each logging what all of them write is n findings, not n * n judged."""
    fresh = []
    for key in logged.keys:
        slot = (logged.prefixes, logged.flat, key)
        if slot not in judged:
            judged.add(slot)
            fresh.append(key)
    if len(fresh) == len(logged.keys):
        return logged
    return dataclasses.replace(logged, keys=tuple(fresh))


@contextlib.contextmanager
def _gc_paused() -> Iterator[None]:
    """No cyclic garbage collection while syntax trees pile up (they hold no cycles to free)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _scan(
    paths: Sequence[Path],
    catalog: Catalog | Callable[[], Catalog],
    calls: Sequence[ScanCall],
    *,
    skip: Sequence[Path],
    here: Path,
    root: Path | None,
    unlogged: bool,
    cache: ScanCache | None,
) -> ScanReport:
    sources = _read_all(paths, skip, here)
    digests: dict[str, str] = {}
    if cache is not None:
        digests = {real: digest(data) for _, real, data in sources if isinstance(data, bytes)}
        settings = [
            repr(tuple(calls)),
            f"unlogged={unlogged}",
            f"here={here}",
            f"root={root}",
            *(f"path={os.path.abspath(p)}" for p in paths),
            *(f"skip={os.path.abspath(p)}" for p in skip),
        ]
        read = ((shown, real, digests[real]) for shown, real, data in sources if real in digests)
        refused = [d.format() for _, _, d in sources if isinstance(d, Diagnostic)]
        kept = cache.report(settings, read, refused)
        if kept is not None:
            return ScanReport(
                list(kept.diagnostics), kept.files, kept.calls, kept.keys, list(kept.candidates)
            )
    from .extract import Project  # noqa: PLC0415 - a cached report loads no analysis

    report = _analysed(
        sources,
        catalog() if callable(catalog) else catalog,
        Project(calls),
        here=here,
        root=root,
        unlogged=unlogged,
        cache=(cache, digests, digest(repr(tuple(calls)))) if cache is not None else None,
    )
    if cache is not None:
        cache.store(
            CachedReport(
                tuple(report.diagnostics),
                report.files,
                report.calls,
                report.keys,
                tuple(report.candidates),
            )
        )
    return report


def _read_all(
    paths: Sequence[Path], skip: Sequence[Path], here: Path
) -> list[tuple[str, str, bytes | Diagnostic]]:
    """``(path shown, real path, bytes or why not read)`` of each source file, in walk order."""
    # Each tree with its real path, resolved once rather than once per file read.
    trees = [
        (top, os.path.realpath(top)) for p in paths if p.is_dir() for top in [os.path.abspath(p)]
    ]
    here_text = os.path.join(os.fspath(here), "")  # the folder with its separator
    sources: list[tuple[str, str, bytes | Diagnostic]] = []
    for path, real in iter_sources(paths, skip):
        absolute = os.path.abspath(path)
        shown = _shown_file(absolute, here_text, here)
        # A file reached by walking a tree must stay inside it; one named is read as named.
        tree = next((top_real for top, top_real in trees if is_within(absolute, top)), None)
        sources.append((shown, real, _read(path, shown, None if tree is None else (real, tree))))
    return sources


def _analysed(
    sources: Sequence[tuple[str, str, bytes | Diagnostic]],
    catalog: Catalog,
    project: Project,
    *,
    here: Path,
    root: Path | None,
    unlogged: bool,
    cache: tuple[ScanCache, dict[str, str], str] | None,
) -> ScanReport:
    """Parse, analyse and judge ``sources``: the report of a scan (``cache``: the cache, the
    digest of each file's bytes by real path, and the digest of the scanned calls)."""
    from .compare import Judge  # noqa: PLC0415 - a cached report loads no analysis
    from .sources import Module  # noqa: PLC0415

    report = ScanReport()
    for shown, real, source in sources:
        if isinstance(source, Diagnostic):
            report.diagnostics.append(source)
            continue
        module = _read_module(project, Module(shown, real, source, None), cache)
        report.files += 1
        if not module.lines or _parsed_now(module, report):
            project.add(module, read=False)
    judge = Judge(catalog)
    by_path = {module.shown: module for module in project.modules}
    found: dict[tuple[str, str, int, int, str], Diagnostic] = {}
    judged: set[tuple[object, ...]] = set()
    for logged in project.logged():
        report.calls += 1
        report.keys += len(logged.keys)
        for diagnostic in judge.judge(_unjudged(logged, judged)):
            pos = diagnostic.position or Position("")
            holder = by_path.get(pos.path)
            if holder is not None and IGNORE_COMMENT in holder.line_text(pos.line):
                continue
            # The same key reached by two calls (a shared helper) is one finding.
            what = diagnostic.message.split(" (logged by", 1)[0]
            slot = (diagnostic.code, pos.path, pos.line, pos.column, what)
            found.setdefault(slot, diagnostic)
    report.diagnostics.extend(found.values())
    if cache is None:
        _check_syntax(project.modules, report, None, {})
    else:
        _check_syntax(project.modules, report, cache[0], cache[1])
    if report.calls < FEW_CALLS:  # a first run on code logging through its own calls
        report.candidates = candidates((m.shown, m.source) for m in project.modules)
    if unlogged:
        for row_finding in judge.unlogged():
            at = row_finding.position
            if root is not None and at is not None:
                moved = Position(_shown(root / at.path, here), at.line, at.column)
                row_finding = dataclasses.replace(row_finding, position=moved)  # noqa: PLW2901
            report.diagnostics.append(row_finding)
    return report


def _read_module(
    project: Project, module: Module, cache: tuple[ScanCache, dict[str, str], str] | None
) -> Module:
    """``module`` with the calls it may make and the lines making them (:meth:`Project.read`),
    those lines from the cache when it knows them for these bytes and these calls."""
    if cache is None:
        return project.read(module)
    kept, digests, calls = cache
    file_digest = digests[module.real]
    lines = kept.lines(file_digest, calls)
    if lines is None:
        project.read(module)
        kept.remember_lines(file_digest, calls, module.lines)
    else:
        module.calls = module.active(project.calls)
        module.lines = list(lines)
    return module
