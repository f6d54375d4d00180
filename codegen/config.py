"""Where the catalog is and where its outputs go: the ``[tool.metric-catalog]`` table.

A project configures the generator in its ``pyproject.toml``::

    [tool.metric-catalog]
    catalog = ["myrl/telemetry/catalog/*.yaml"]
    package = "myrl.telemetry.generated"
    package-dir = "myrl/telemetry/generated"
    docs-dir = "docs/metrics"
    dashboards-dir = "docs/dashboards"

:func:`load_config` finds the nearest ``pyproject.toml`` holding the table,
walking up from the current directory (or reads the one in ``--root``); every
path in it is relative to that file's folder, the *project root*. Command-line
flags override single keys (:func:`apply_overrides`). Without any table the
defaults below apply, rooted at the current directory (or ``--root``).

This module imports only the standard library: ``generate``'s no-op path reads
the configuration before it knows whether anything needs rendering.
"""

from __future__ import annotations

import dataclasses
import difflib
import errno
import glob
import json
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Final, Literal, TypeVar, assert_never

from .runs.rewrites import parse_prefix_rewrites, parse_rewrite
from .safe_fs import read_input
from .safe_text import describe, first_control, shown
from .scan.calls import ScanCall, parse_scan_call

__all__ = [
    "CONFIG_KEYS",
    "CONFIG_OPTION",
    "KEYS",
    "MAX_TOML_DEPTH",
    "PYPROJECT",
    "PYPROJECT_BYTES",
    "TABLE",
    "Config",
    "ConfigError",
    "ConfigKey",
    "KeyKind",
    "NoCatalogError",
    "Output",
    "apply_overrides",
    "config_for_root",
    "find_pyproject",
    "load_config",
    "no_catalog_message",
    "parse_config_option",
    "parse_pyproject",
    "parse_table",
    "read_config",
    "table_lines",
    "toml_too_deep_at",
]

PYPROJECT: Final = "pyproject.toml"
"""The file the configuration is read from."""

TABLE: Final = "tool.metric-catalog"
"""The TOML table holding the configuration."""

PYPROJECT_BYTES: Final = 16 * 1024 * 1024
"""Largest ``pyproject.toml`` read (a real one is a few KiB)."""

MAX_TOML_DEPTH: Final = 64
"""Deepest nesting (arrays, inline tables, dotted keys) a TOML document or ``--config``
value may have. No key of the table nests more than 3 levels; the TOML parser and every
walk of a value recurse once per level, so a deeper one is refused before either runs."""

_TOML_TOKEN: Final = re.compile(
    r'"""(?:[^"\\]|\\.|"(?!""))*"""'  # multi-line basic string
    r"|'''.*?'''"  # multi-line literal string
    r'|"(?:[^"\\\n]|\\.)*"'  # basic string
    r"|'[^'\n]*'"  # literal string
    r"|#[^\n]*"  # comment
    r"|[\[\]{}]",
    re.DOTALL,
)
"""What can hold a bracket in TOML text: strings and comments (skipped), and the brackets."""

_T = TypeVar("_T")

_PACKAGE: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*\Z")


class ConfigError(ValueError):
    """The ``[tool.metric-catalog]`` table (or a flag overriding it) is not usable."""


class NoCatalogError(ConfigError):
    """The catalog a command would read matches no file (a wrong ``--root``, cwd or ``catalog``).

    Every command refuses it (exit 2) instead of reporting "0 files, no
    problems" or, for ``generate``, deleting every generated file.
    """


@dataclass(frozen=True, slots=True)
class Output:
    """An extra file rendered from an adopter's template (Weaver-style).

    ``path`` is relative to the project root; when it contains ``{module}`` the
    template renders once per catalog file, otherwise once for the catalog.
    """

    template: str
    """Template name inside the configured template folder, e.g. ``ts/constants.ts.j2``."""
    path: str
    """Output path, e.g. ``web/src/metrics/{module}.ts`` or ``web/src/metrics.ts``."""

    @property
    def per_file(self) -> bool:
        """Whether the template renders once per catalog file."""
        return "{module}" in self.path

    @property
    def directory(self) -> str:
        """The folder the output lands in (managed: stale generated files there are removed)."""
        return PurePosixPath(self.path).parent.as_posix()


KeyKind = Literal["globs", "folder", "text", "outputs", "calls", "rewrites"]
"""How a key's value is read: ``globs`` (a list of root-relative files, folders
or patterns), ``folder`` (one root-relative folder), ``text`` (a non-empty
string, not a path), ``outputs`` (an array of ``template``/``path`` tables),
``calls`` (an array of ``scan`` call tables, see :mod:`codegen.scan.calls`) or
``rewrites`` (a list of ``"FROM=TO"`` strings, see :func:`~codegen.runs.rewrites.parse_rewrite`)."""

_KEY: Final = "metric-catalog key"


@dataclass(frozen=True, slots=True)
class _Spec:
    kind: KeyKind
    help: str
    example: str
    flag: str | None
    metavar: str | None
    comment: str | None
    shown_default: str | None


def _key(
    default: _T,
    *,
    kind: KeyKind,
    help: str,
    example: str,
    flag: str | None = None,
    metavar: str | None = None,
    comment: str | None = None,
    shown_default: str | None = None,
) -> _T:
    """A :class:`Config` field that is a key of the table (see :class:`ConfigKey`)."""
    spec = _Spec(kind, help, example, flag, metavar, comment, shown_default)
    return field(default=default, metadata={_KEY: spec})


@dataclass(frozen=True, slots=True)
class Config:
    """The resolved configuration: the project root and every location, root-relative.

    Each field declared with ``_key(...)`` is a key of the table, declared once:
    its name (the field's, ``-`` for ``_``), kind, default, help, the example
    errors show, its command-line flag and ``init``'s comment. Parsing, the
    flags (:mod:`codegen.commands`), ``init``'s table and the configuration reference's
    table (checked by a test) all read :data:`CONFIG_KEYS`, built from them.
    """

    root: Path = field(default_factory=Path.cwd)
    """Absolute project root: the folder of the ``pyproject.toml`` read (or ``--root``/cwd)."""
    source: Path | None = None
    """The ``pyproject.toml`` the table came from; ``None`` when the defaults apply."""
    catalog: tuple[str, ...] = _key(
        ("catalog/*.yaml",),
        kind="globs",
        help="catalog files, folders (their `*.yaml`) or globs (`**` recurses)",
        example='a list of catalog files, folders or globs, e.g. ["myrl/telemetry/catalog/*.yaml"]',
        flag="catalog files or folders to read instead of the configured catalog",
        metavar="PATH",
        comment="catalog files, folders or globs",
    )
    """Catalog files, folders (their ``*.yaml``) or glob patterns, root-relative."""
    schema_file: str | None = _key(
        None,
        kind="folder",
        help=(
            "the project's copy of the catalog's JSON schema, which catalog files name in "
            "`# yaml-language-server: $schema=...`; `generate` keeps it current"
        ),
        example='a JSON file inside the project, e.g. "myrl/telemetry/catalog/catalog.schema.json"',
        flag="the project's copy of the catalog schema",
        metavar="FILE",
        comment="the catalog schema editors read",
        shown_default="`catalog.schema.json` in the first `catalog` entry's folder",
    )
    """Root-relative path of the schema copy; ``None``: beside the first catalog entry."""
    package: str = _key(
        "metric_catalog.generated",
        kind="text",
        help="import path of the generated modules, `<package>.<module>`",
        example='the generated package\'s import path, e.g. "myrl.telemetry.generated"',
        flag="import path of the generated package",
        metavar="IMPORT.PATH",
        comment="import path of the generated modules",
    )
    """Import path of the generated package (``<package>.<module>`` per catalog file)."""
    package_dir: str = _key(
        "src/metric_catalog/generated",
        kind="folder",
        help="folder they are written to; must end in the package's path",
        example='the folder of that package, e.g. "myrl/telemetry/generated"',
        flag="folder of the generated package",
        comment="their folder",
        shown_default="the package's path",
    )
    """Folder the generated modules are written to."""
    docs_dir: str = _key(
        "docs/metrics",
        kind="folder",
        help="the catalog pages (MyST Markdown) and `catalog.json`",
        example='the folder for the catalog pages, e.g. "docs/metrics"',
        flag="folder of the generated catalog pages",
        comment="catalog pages (Sphinx: metric_catalog.sphinx)",
    )
    """Folder of the generated catalog pages (Markdown for Sphinx + MyST)."""
    dashboards_dir: str = _key(
        "docs/dashboards",
        kind="folder",
        help="one Grafana dashboard per catalog file with series",
        example='the folder for the Grafana dashboards, e.g. "docs/dashboards"',
        flag="folder of the generated Grafana dashboards",
        comment="Grafana dashboards",
    )
    """Folder of the generated Grafana dashboards."""
    title: str = _key(
        "metric-catalog",
        kind="text",
        help=(
            "the site title: the heading of the catalog index page and, through the Sphinx "
            "extension, `html_title` (unless `conf.py` sets one); templates see it"
        ),
        example='the docs site title, e.g. "myrl metrics"',
        flag="docs site title",
        comment="docs site title",
    )
    """Site title: used by the docs pages and the Sphinx extension."""
    cache_dir: str = _key(
        ".cache/metric-catalog",
        kind="folder",
        help=(
            "`generate`'s no-op manifest and `scan`'s cache (in `scan/`); keep it out of the "
            "package and out of git"
        ),
        example='a folder outside the package, e.g. ".cache/metric-catalog"',
        flag="folder of the no-op manifest and the scan cache",
        comment="generate's no-op manifest; keep out of git",
    )
    """Folder of the no-op manifest and the scan cache; keep it out of the package (and git)."""
    templates_dir: str | None = _key(
        None,
        kind="folder",
        help="templates that replace or add to the built-in ones",
        example='a folder of template overrides, e.g. "telemetry/templates"',
        flag="folder of template overrides and added templates",
        comment="template overrides and added templates",
    )
    """Folder whose templates override or add to the built-in ones."""
    generate_command: str = _key(
        "metric-catalog generate",
        kind="text",
        help="the command `check`'s advice and the generated headers name",
        example='how your project regenerates, e.g. "metric-catalog generate"',
        comment="the command check's advice and generated headers name",
    )
    """The command the check's advice and generated headers name."""
    outputs: tuple[Output, ...] = _key(
        (),
        kind="outputs",
        help="added outputs: `[[tool.metric-catalog.outputs]]` tables with `template` and `path`",
        example=(
            '[[tool.metric-catalog.outputs]] tables with template = "ts/constants.ts.j2" and '
            'path = "web/src/metrics/{module}.ts"'
        ),
    )
    """Extra files rendered from templates in :attr:`templates_dir`."""
    scan_calls: tuple[ScanCall, ...] = _key(
        (),
        kind="calls",
        help=(
            "calls `scan` reads as logging metrics, added to its defaults (an entry with the "
            'same `call` replaces one): `[{call = "Tracking.log", metrics = "data"}]`'
        ),
        example=(
            'a list of tables such as {call = "Tracking.log", metrics = "data"} or '
            '{call = "log_metrics", metrics = 0, prefix = "prefix"} (metrics, key, prefix and '
            "through: an argument position, a keyword name, or [position, keyword]); "
            'key-prefix = "train/" adds literal text before every key; dict-only = true skips '
            'calls given no dict; {call = "all_reduce", through = 0} hands its argument back; '
            'producers: {call = "Worker.training_step", returns = true} (or returns = "metrics") '
            'and {field = "meta_info.metrics"} say what crosses a process boundary'
        ),
        shown_default="see below",
    )
    """Calls ``scan`` reads as logging metrics, besides (or replacing) the default ones."""
    key_rewrite: tuple[str, ...] = _key(
        (),
        kind="rewrites",
        help=(
            "`live-check`: literal substring rewrites (`FROM=TO`, in order) of every key read "
            "from a run before it is matched, for a backend that mangles keys: "
            '`["_at_=@"]` reads verl\'s MLflow spelling `mean_at_4` as `mean@4`; '
            "`--key-rewrite` adds more"
        ),
        example=(
            'a list of "FROM=TO" strings, e.g. ["_at_=@"] (FROM: the text as the backend '
            "wrote it, non-empty and without '='; TO: the text the catalog's keys hold)"
        ),
        comment="live-check: rewrite logged keys before matching",
    )
    """``FROM=TO`` rewrites live-check applies to every logged key (see :attr:`key_rewrites`)."""
    key_prefix_rewrite: tuple[str, ...] = _key(
        (),
        kind="rewrites",
        help=(
            "`live-check`: rewrites of a key's start (`FROM=TO`: the first rule whose FROM a "
            "key starts with, once), applied before `key-rewrite`, for a logging callback "
            'that prefixes every key; `["transformers"]` undoes the Hugging Face Trainer\'s '
            "W&B and TensorBoard callbacks (`train/loss` is `loss`, `eval/loss` `eval_loss`); "
            "`--key-prefix-rewrite` adds more"
        ),
        example=(
            'a list of "FROM=TO" strings or table names, e.g. ["transformers"] or '
            '["train/=", "eval/=eval_"] (FROM non-empty)'
        ),
        comment="live-check: rewrite a logged key's prefix before matching",
    )
    """Prefix rules (``FROM=TO`` or a table name) live-check applies to each key's start."""
    baseline_values: str | None = _key(
        None,
        kind="folder",
        help=(
            "`live-check`: a `--format json` report of an earlier run; an open placeholder "
            "value its `coverage.open_values` did not list is a `new_open_value` finding; "
            "`--baseline-values` overrides it"
        ),
        example='a live-check JSON report inside the project, e.g. "ci/baseline-report.json"',
        comment="live-check: report whose open placeholder values are known",
    )
    """Root-relative path of the report live-check's ``new_open_value`` findings compare with."""
    catalog_flag: bool = False
    """Whether :attr:`catalog` came from ``--catalog`` (named in errors; not an output input)."""

    @property
    def key_rewrites(self) -> tuple[tuple[str, str], ...]:
        """:attr:`key_rewrite` as ``(from, to)`` pairs, in order."""
        return tuple(parse_rewrite(rule) for rule in self.key_rewrite)

    @property
    def key_prefix_rewrites(self) -> tuple[tuple[str, str], ...]:
        """:attr:`key_prefix_rewrite` as ``(from, to)`` pairs, tables expanded, in order."""
        return parse_prefix_rewrites(self.key_prefix_rewrite)

    @property
    def managed_dirs(self) -> tuple[str, ...]:
        """Folders whose generated files the plan owns (stale marked files there are removed)."""
        dirs = [self.package_dir, self.docs_dir, self.dashboards_dir]
        dirs += [output.directory for output in self.outputs]
        return tuple(dict.fromkeys(dirs))

    @property
    def manifest_path(self) -> str:
        """Root-relative path of the no-op manifest."""
        return f"{self.cache_dir}/manifest.json"

    @property
    def templates_path(self) -> Path | None:
        """Absolute template override folder, if one is configured."""
        return None if self.templates_dir is None else self.root / self.templates_dir

    def catalog_paths(self) -> list[Path]:
        """The catalog files, absolute, sorted and without duplicates.

        A folder stands for its ``*.yaml`` files; a pattern is globbed under the
        root (``**`` recurses); a plain file name is kept even when missing, so
        loading it reports the missing file.
        """
        found: set[Path] = set()
        for entry in self.catalog:
            if any(ch in entry for ch in "*?["):
                if Path(entry).is_absolute():
                    matches = (Path(p) for p in glob.glob(entry, recursive=True))
                else:
                    matches = self.root.glob(entry)
                # Not is_file(): a FIFO or a symlink loop is kept, so loading it says why.
                found.update(p for p in matches if not p.is_dir())
                continue
            path = self.root / entry
            if path.is_dir():
                found.update(p for p in path.glob("*.yaml") if not p.is_dir())
            else:
                found.add(path)
        return sorted(found)

    def catalog_files(self) -> list[Path]:
        """:meth:`catalog_paths`, or :class:`NoCatalogError` when none of them is a file.

        A listed file that is missing while others exist is kept (loading it
        reports the missing file at its path).

        Raises:
            NoCatalogError: Nothing the catalog entries name exists; the message
                names the root, the configuration file, the entries tried and the fixes.
        """
        paths = self.catalog_paths()
        if not any(path.is_file() for path in paths):
            raise NoCatalogError(no_catalog_message(self))
        return paths

    def with_catalog(self, entries: tuple[str, ...]) -> Config:
        """This configuration reading ``entries`` (files, folders, patterns) as the catalog."""
        return dataclasses.replace(self, catalog=entries, catalog_flag=True)

    def fingerprint(self) -> str:
        """Every setting that changes the output, as one line (an input of the manifest)."""
        doc = dataclasses.asdict(self)
        doc.pop("root")
        doc.pop("source")
        doc.pop("catalog_flag")
        doc.pop("scan_calls")  # read by scan only; changes no generated output
        doc.pop("key_rewrite")  # read by live-check only
        doc.pop("key_prefix_rewrite")
        doc.pop("baseline_values")
        return repr(sorted(doc.items()))


@dataclass(frozen=True, slots=True)
class ConfigKey:
    """One key of the ``[tool.metric-catalog]`` table, as :class:`Config` declares it."""

    name: str
    """The key as written in the table, e.g. ``package-dir``."""
    attr: str
    """The :class:`Config` field it sets, e.g. ``package_dir``."""
    kind: KeyKind
    """How its value is read (:data:`KeyKind`); only ``globs`` and ``folder`` are paths."""
    default: object
    """The value when the table does not set it."""
    help: str
    """What it sets (Markdown): the configuration reference's table column."""
    example: str
    """How to write it, named by every error about it."""
    flag: str | None
    """The help of its command-line flag ``--<name>``; ``None`` when it has no flag."""
    metavar: str | None
    """The flag's metavar (``None``: argparse's default, or ``DIR`` for a folder)."""
    comment: str | None
    """The comment ``init`` writes beside it."""
    shown_default: str
    """The default as the configuration reference shows it (Markdown)."""

    @property
    def is_path(self) -> bool:
        """Whether its value is a root-relative path (or a list of them)."""
        return self.kind in ("globs", "folder")


def _shown(default: object) -> str:
    if default is None or default == ():
        return "none"
    if isinstance(default, tuple):
        return "`[" + ", ".join(f'"{item}"' for item in default) + "]`"
    return f"`{default}`"


def _declared_keys() -> tuple[ConfigKey, ...]:
    keys = []
    for item in dataclasses.fields(Config):
        spec = item.metadata.get(_KEY)
        if not isinstance(spec, _Spec):
            continue
        keys.append(
            ConfigKey(
                name=item.name.replace("_", "-"),
                attr=item.name,
                kind=spec.kind,
                default=item.default,
                help=spec.help,
                example=spec.example,
                flag=spec.flag,
                metavar=spec.metavar or ("DIR" if spec.kind == "folder" else None),
                comment=spec.comment,
                shown_default=spec.shown_default or _shown(item.default),
            )
        )
    return tuple(keys)


CONFIG_KEYS: Final = _declared_keys()
"""Every key the table accepts, in declaration order, with its kind, default, help and flag."""

KEYS: Final = tuple(key.name for key in CONFIG_KEYS)
"""Every key the table accepts (names only)."""

_BY_NAME: Final[dict[str, ConfigKey]] = {key.name: key for key in CONFIG_KEYS}


def _toml(value: object) -> str:
    """A TOML value for a key's value: a basic string, or an array of them.

    One level only, never recursing: no key's value nests, so a container inside the
    array is refused (:class:`ConfigError`) rather than walked.
    """
    items = value if isinstance(value, tuple | list) else None
    if items is None:
        # A JSON string (not ASCII-escaped) is a valid TOML basic string.
        return json.dumps(str(value), ensure_ascii=False)
    if any(isinstance(item, tuple | list | dict | set) for item in items):
        raise ConfigError("a key's value is a string or a list of strings, never nested lists")
    return "[" + ", ".join(json.dumps(str(item), ensure_ascii=False) for item in items) + "]"


def table_lines(values: Mapping[str, object]) -> list[str]:
    """``key = value`` lines of the table for ``values`` (by key name), each with its comment.

    A ``globs`` key given one string is written as a one-item list; keys come
    in declaration order. ``outputs`` is an array of tables and cannot be
    written inline here.

    Raises:
        ConfigError: A name in ``values`` is not a key, or is ``outputs``.
    """
    lines = []
    for key in CONFIG_KEYS:
        if key.name not in values:
            continue
        value = values[key.name]
        if key.kind in ("outputs", "calls"):
            raise ConfigError(f"{key.name} is an array of tables; write it by hand")
        if key.kind in ("globs", "rewrites") and isinstance(value, str):
            value = (value,)
        line = f"{key.name} = {_toml(value)}"
        lines.append(line.ljust(56) + f"# {key.comment}" if key.comment else line)
    unknown = sorted(set(values) - set(KEYS))
    if unknown:
        msg = f"not keys of [{TABLE}]: {', '.join(unknown)}"
        raise ConfigError(msg)
    return lines


def _where(source: Path, key: str | None = None) -> str:
    """``pyproject.toml[:line]`` as shown in errors: relative to the cwd when below it."""
    try:
        shown = source.relative_to(Path.cwd()).as_posix()
    except ValueError:
        shown = source.as_posix()
    if key is None:
        return shown
    try:
        # TOML lines end at "\n" only; a raw U+2028 inside a string is not a line break.
        lines = read_input(source, PYPROJECT_BYTES).decode("utf-8").split("\n")
    except (OSError, UnicodeDecodeError):
        return shown
    inside = False
    # ``key =`` or a dotted ``key.sub =`` (both set the key).
    pattern = re.compile(rf"\s*(?:{re.escape(key)}|\"{re.escape(key)}\")\s*[=.]")
    for number, line in enumerate(lines, start=1):
        stripped = line.strip()
        if stripped.startswith("["):
            header = stripped.strip("[] ")
            if header == f"{TABLE}.{key}":  # [[tool.metric-catalog.outputs]]
                return f"{shown}:{number}"
            inside = header.startswith(TABLE)
        elif inside and pattern.match(line):
            return f"{shown}:{number}"
    return shown


def no_catalog_message(config: Config, entries: tuple[str, ...] | None = None) -> str:
    """Why a command found no catalog file, where it looked and how to fix it.

    ``entries`` are the paths given on the command line instead of the
    configured catalog (``validate PATHS``), if any.
    """
    root = config.root.as_posix()
    if entries is not None:
        shown = ", ".join(repr(entry) for entry in entries)
        return (
            f"no catalog files: the paths given on the command line ({shown}) hold no "
            "catalog file; fix: pass catalog files or folders holding *.yaml files, or run "
            "`metric-catalog init` to start a catalog"
        )
    shown = "catalog = [" + ", ".join(repr(entry) for entry in config.catalog) + "]"
    if config.catalog_flag:
        used = f"--catalog ({shown})"
    elif config.source is not None:
        used = f"`{shown}` of [{TABLE}] in {_where(config.source, 'catalog')}"
    else:
        used = f"the default `{shown}` (no {PYPROJECT} with [{TABLE}] at or above {root})"
    looked = f"{used} matches no file under the project root {root}"
    return (
        f"no catalog files: {looked}; fix: run from your project or pass "
        f"--root <the folder of its {PYPROJECT}>, point the `catalog` key of "
        f"[{TABLE}] (or --catalog) at your catalog files, or run "
        "`metric-catalog init` to start a catalog"
    )


_Where = Path | str | None
"""Where a value came from, as errors name it: a ``pyproject.toml``, a label such as
``command line: --config`` (:data:`CONFIG_OPTION`), or ``None`` for a per-key flag."""


def _error(source: _Where, key: str, problem: str) -> ConfigError:
    if isinstance(source, Path):
        where = f"{_where(source, key)}: [{TABLE}]"
    else:
        where = source or "command line: --" + key
    return ConfigError(f"{where} {key}: {problem}; expected {_BY_NAME[key].example}")


def _text(value: object, key: str, source: _Where) -> str:
    """A non-empty string without control characters, or a ConfigError naming the key and line.

    Every string of the table can reach a generated file (the header names the
    command and the catalog; titles, packages and paths land in pages, JSON and
    modules) or a terminal, so a line break (any :meth:`str.splitlines` knows), a
    C0/C1 control or a bidi control is refused where the table is read, not
    blamed later on a generated file.
    """
    if not isinstance(value, str) or not value.strip():
        raise _error(source, key, f"{value!r} is not a non-empty string")
    char = first_control(value)
    if char is not None:
        problem = (
            f"'{shown(value)}' holds the control character {describe(char)}, which would "
            "break or disguise the lines of the generated files it reaches; remove it"
        )
        raise _error(source, key, problem)
    return value


def _relative(value: object, key: str, source: _Where, *, glob: bool = False) -> str:
    """A root-relative POSIX path from the table, or a ConfigError saying how to write it."""
    value = _text(value, key, source)
    path = PurePosixPath(value.replace("\\", "/"))
    if path.is_absolute() or re.match(r"[A-Za-z]:", value):
        raise _error(source, key, f"{value!r} is absolute; paths are relative to {PYPROJECT}")
    if ".." in path.parts:
        raise _error(
            source, key, f"{value!r} leaves the project root; keep it inside {PYPROJECT}'s folder"
        )
    if not glob and any(ch in value for ch in "*?["):
        raise _error(source, key, f"{value!r} is a pattern; give one path")
    text = path.as_posix()
    return "" if text == "." else text


def _rewrites(value: object, key: str, source: _Where) -> tuple[str, ...]:
    entries = [value] if isinstance(value, str) else value
    if not isinstance(entries, list):
        raise _error(source, key, f"{value!r} is not a list of strings")
    rules = []
    for index, entry in enumerate(entries):
        rule = _text(entry, key, source)
        try:
            if key == "key-prefix-rewrite":
                parse_prefix_rewrites((rule,))
            else:
                parse_rewrite(rule)
        except ValueError as exc:
            raise _error(source, key, f"entry {index + 1}: {exc}") from None
        rules.append(rule)
    return tuple(rules)


def _outputs(value: object, source: _Where) -> tuple[Output, ...]:
    if not isinstance(value, list):
        raise _error(source, "outputs", f"{value!r} is not an array of tables")
    outputs = []
    for item in value:
        if not isinstance(item, dict) or set(item) != {"template", "path"}:
            shown = sorted(item) if isinstance(item, dict) else item
            raise _error(source, "outputs", f"{shown!r} must have exactly template and path")
        template = _relative(item["template"], "outputs", source)
        path = _relative(item["path"], "outputs", source)
        if PurePosixPath(path).parent.as_posix() in {".", ""}:
            raise _error(source, "outputs", f"path {path!r} must be inside a folder")
        outputs.append(Output(template, path))
    return tuple(outputs)


def _scan_calls(value: object, source: _Where) -> tuple[ScanCall, ...]:
    if not isinstance(value, list):
        raise _error(source, "scan-calls", f"{value!r} is not an array of tables")
    calls = []
    for index, item in enumerate(value):
        try:
            calls.append(parse_scan_call(item))
        except ValueError as exc:
            raise _error(source, "scan-calls", f"entry {index + 1}: {exc}") from None
    return tuple(calls)


def _check_package(config: Config, where: _Where = None) -> None:
    """The package's import path must match the tail of its folder (errors name ``where``,
    default: the table's file)."""
    where = where or config.source
    if not _PACKAGE.match(config.package):
        raise _error(where, "package", f"{config.package!r} is not a dotted Python import path")
    parts = tuple(config.package.split("."))
    dir_parts = PurePosixPath(config.package_dir).parts
    if dir_parts[-len(parts) :] != parts:
        problem = (
            f"package-dir {config.package_dir!r} does not end in "
            f"{'/'.join(parts)!r}, the folder of package {config.package!r}"
        )
        raise _error(where, "package-dir", problem)


def _value(key: ConfigKey, value: object, source: _Where) -> object:
    """A key's value read according to its kind, or a ConfigError saying how to write it."""
    match key.kind:
        case "globs":
            entries = [value] if isinstance(value, str) else value
            if not isinstance(entries, list) or not entries:
                raise _error(source, key.name, f"{value!r} is not a non-empty list of strings")
            return tuple(_relative(v, key.name, source, glob=True) for v in entries)
        case "folder":
            return _relative(value, key.name, source)
        case "text":
            return _text(value, key.name, source).strip()
        case "outputs":
            return _outputs(value, source)
        case "calls":
            return _scan_calls(value, source)
        case "rewrites":
            return _rewrites(value, key.name, source)
        case _:  # pragma: no cover - every kind is handled above
            assert_never(key.kind)


def _from_table(table: Mapping[str, object], source: _Where) -> dict[str, object]:
    """Validated keyword arguments for :class:`Config` from a TOML table."""
    values: dict[str, object] = {}
    for name, value in table.items():
        key = _BY_NAME.get(name)
        if key is None:
            close = difflib.get_close_matches(name, KEYS, n=1)
            hint = f"did you mean {close[0]!r}? " if close else ""
            where = _where(source, name) if isinstance(source, Path) else source or "configuration"
            msg = (
                f"{where}: [{TABLE}] has an unknown key {name!r}; {hint}"
                f"the keys are {', '.join(KEYS)}"
            )
            raise ConfigError(msg)
        values[key.attr] = _value(key, value, source)
    if "package" in values and "package_dir" not in values:
        # The folder defaults to the import path under the root.
        values["package_dir"] = str(values["package"]).replace(".", "/")
    return values


def toml_too_deep_at(text: str, limit: int = MAX_TOML_DEPTH) -> int | None:
    """The index in the TOML ``text`` where arrays and inline tables first nest deeper than
    ``limit``, or ``None``. Brackets in strings and comments do not count; one pass, no
    recursion, so it is safe on any text (the TOML parser recurses once per level)."""
    depth = 0
    for match in _TOML_TOKEN.finditer(text):
        char = match.group()
        if char in "[{":
            depth += 1
            if depth > limit:
                return match.start()
        elif char in "]}":
            depth = max(depth - 1, 0)
    return None


def _too_deep(value: object, limit: int = MAX_TOML_DEPTH) -> bool:
    """Whether a parsed TOML value nests deeper than ``limit`` (dotted keys nest without a
    bracket); walked with a stack, never recursively."""
    stack: list[tuple[object, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if depth > limit:
            return True
        if isinstance(item, dict):
            stack.extend((inner, depth + 1) for inner in item.values())
        elif isinstance(item, list):
            stack.extend((inner, depth + 1) for inner in item)
    return False


def _nesting_problem(levels: str) -> str:
    return (
        f"{levels} nest deeper than {MAX_TOML_DEPTH} levels; no key "
        f"of [{TABLE}] nests more than 3: flatten the value"
    )


def parse_pyproject(pyproject: Path) -> dict[str, object]:
    """``pyproject`` read through :mod:`codegen.safe_fs` and parsed, nesting bounded.

    Raises:
        ConfigError: Not a readable regular file, not UTF-8, nested too deep, or not
            valid TOML; the message names the file (and the line and column).
    """
    try:
        text = read_input(pyproject, PYPROJECT_BYTES).decode("utf-8")
    except OSError as exc:
        msg = f"{_where(pyproject)}: cannot be read ({exc.strerror or exc}); fix or replace it"
        raise ConfigError(msg) from None
    except UnicodeDecodeError as exc:
        msg = f"{_where(pyproject)}: not UTF-8 ({exc.reason}); TOML files are UTF-8: re-save it"
        raise ConfigError(msg) from None
    deep = toml_too_deep_at(text)
    if deep is not None:
        line = text.count("\n", 0, deep) + 1
        column = deep - (text.rfind("\n", 0, deep) + 1) + 1
        problem = _nesting_problem("arrays and inline tables")
        raise ConfigError(f"{_where(pyproject)}:{line}:{column}: {problem}")
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        msg = f"{_where(pyproject)}: not valid TOML ({exc}); fix the file"
        raise ConfigError(msg) from None


def read_config(pyproject: Path) -> Config | None:
    """The configuration in ``pyproject``, or ``None`` when it has no ``[tool.metric-catalog]``.

    Raises:
        ConfigError: The file is not a readable regular file, not valid TOML or nested
            deeper than :data:`MAX_TOML_DEPTH`, or the table has an unknown key or a bad
            value; the message names the file, the key (or line and column) and the fix.
    """
    doc = parse_pyproject(pyproject)
    tool = doc.get("tool", {})
    table = tool.get("metric-catalog") if isinstance(tool, dict) else None
    if table is None:
        return None
    if not isinstance(table, dict):
        msg = f"{_where(pyproject)}: [{TABLE}] must be a table, not {type(table).__name__}"
        raise ConfigError(msg)
    for name, value in table.items():
        if _too_deep(value):
            problem = _nesting_problem("its dotted keys and tables")
            raise ConfigError(f"{_where(pyproject, name)}: [{TABLE}] {name}: {problem}")
    return parse_table(table, pyproject)


def parse_table(table: Mapping[str, object], pyproject: Path) -> Config:
    """The configuration a ``[tool.metric-catalog]`` table of ``pyproject`` stands for.

    Raises:
        ConfigError: An unknown key or a bad value (see :func:`read_config`).
    """
    root = pyproject.resolve().parent
    values = _from_table(table, pyproject)
    config = Config(root=root, source=pyproject.resolve(), **values)  # type: ignore[arg-type]
    _check_package(config)
    return config


def find_pyproject(start: Path) -> Path | None:
    """The nearest ``pyproject.toml`` at or above ``start`` holding ``[tool.metric-catalog]``."""
    for folder in (start, *start.parents):
        candidate = folder / PYPROJECT
        if candidate.is_file() and _has_table(candidate):
            return candidate
    return None


def _has_table(pyproject: Path) -> bool:
    try:
        text = read_input(pyproject, PYPROJECT_BYTES).decode("utf-8", errors="replace")
    except OSError as exc:
        # Too large to look into: read_config refuses it by name, never silently skips it.
        return exc.errno == errno.EFBIG
    # Cheap pre-check; read_config parses properly (and reports bad TOML).
    return re.search(rf"^\s*\[\s*{re.escape(TABLE)}\s*[\].]", text, re.MULTILINE) is not None


def config_for_root(root: Path) -> Config:
    """The configuration of the project at ``root``: its table, else the defaults there.

    Raises:
        ConfigError: See :func:`read_config`.
    """
    root = root.resolve()
    pyproject = root / PYPROJECT
    if pyproject.is_file() and _has_table(pyproject):
        config = read_config(pyproject)
        if config is not None:
            return config
    return Config(root=root)


def load_config(root: Path | None = None, *, start: Path | None = None) -> Config:
    """The configuration for a command run.

    With ``root`` (``--root``), the table in ``root/pyproject.toml`` or the
    defaults there. Without, the nearest table walking up from ``start``
    (default: the current directory), or the defaults rooted at ``start``.

    Raises:
        ConfigError: See :func:`read_config`.
    """
    if root is not None:
        return config_for_root(root)
    here = (start or Path.cwd()).resolve()
    found = find_pyproject(here)
    if found is not None:
        config = read_config(found)
        if config is not None:
            return config
    return Config(root=here)


def apply_overrides(
    config: Config, overrides: Mapping[str, object | None], *, where: str | None = None
) -> Config:
    """``config`` with the keys given on the command line replaced (``None`` = not given).

    Keys are the table's (``package-dir``); path values are relative to the
    project root, like the table's. ``where`` is how errors name the origin
    (default: the key's own flag, ``command line: --package``; :data:`CONFIG_OPTION`
    for ``--config KEY=VALUE``).

    Raises:
        ConfigError: An override is not a usable value for its key.
    """
    given = {key: value for key, value in overrides.items() if value is not None}
    if not given:
        return config
    values = _from_table(given, where)
    if "package" in given and "package-dir" not in given:
        # --package alone keeps the configured folder unless it cannot hold that package.
        values.pop("package_dir", None)
    updated = dataclasses.replace(config, **values)  # type: ignore[arg-type]
    _check_package(updated, where)
    return updated


CONFIG_OPTION: Final = "command line: --config"
"""How errors name a value given as ``--config KEY=VALUE``."""


def parse_config_option(text: str) -> tuple[str, object]:
    """One ``--config KEY=VALUE``: the key's name and its value, as the table would hold it.

    The value is read as a TOML value when it is one of the kinds a key takes (a
    string, an array, an inline table: ``--config 'catalog=["a/*.yaml", "b"]'``),
    otherwise as plain text (``--config package-dir=src/gen``), so the same
    checks as the table's apply (:func:`apply_overrides` runs them).

    Raises:
        ConfigError: No ``=``, or the key is not a key of the table; the message
            names the key (and the closest one) and how to write the option.
    """
    name, equals, raw = text.partition("=")
    name = name.strip()
    if not equals or not name:
        msg = (
            f"{CONFIG_OPTION} {text!r}: expected KEY=VALUE, e.g. --config package-dir=src/gen; "
            f"the keys are {', '.join(KEYS)}"
        )
        raise ConfigError(msg)
    if name not in _BY_NAME:
        close = difflib.get_close_matches(name, KEYS, n=1)
        hint = f"did you mean {close[0]!r}? " if close else ""
        msg = (
            f"{CONFIG_OPTION} {name}: not a key of [{TABLE}]; {hint}the keys are {', '.join(KEYS)}"
        )
        raise ConfigError(msg)
    value: object = raw
    deep = toml_too_deep_at(raw)
    if deep is not None:
        problem = _nesting_problem("arrays and inline tables")
        raise ConfigError(f"{CONFIG_OPTION} {name}: at column {deep + 1} of the value, {problem}")
    try:
        parsed = tomllib.loads(f"value = {raw}").get("value")
    except tomllib.TOMLDecodeError:
        parsed = None
    if _too_deep(parsed):
        problem = _nesting_problem("its dotted keys and tables")
        raise ConfigError(f"{CONFIG_OPTION} {name}: {problem}")
    if isinstance(parsed, str | list | dict):
        value = parsed
    return name, value
