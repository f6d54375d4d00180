"""``metric-catalog live-check RUN... | --otlp-listen HOST:PORT | --scrape URL``: was it logged?

RUN is a log in any format :mod:`codegen.runs.ingest` reads (JSONL, TensorBoard,
MLflow, W&B, CSV, ...). Several files or a glob (one file per worker) are
checked together: presence over the whole run, values per worker (see
:mod:`codegen.live_check.workers`). ``--otlp-listen HOST:PORT`` (formerly
``--otlp``) and ``--scrape URL`` check what a running job exports instead (see
:mod:`codegen.runs.live`). The flags build one :class:`~codegen.live_check.CheckOptions`.
"""

from __future__ import annotations

import argparse
import glob
import signal
import sys
import threading
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Final

from ..config import Config
from ..live_check import (
    FINDING_KINDS,
    KINDS,
    CheckOptions,
    LogInputError,
    check_file,
    check_paths,
    check_records,
    check_stream,
)
from ..live_check.baseline import (
    BaselineError,
    BaselineValues,
    load_baseline_values,
    new_open_value_findings,
)
from ..live_check.workers import expand_inputs
from ..runs.ingest import INGESTERS
from ..runs.live import add_live_arguments, gather
from ..runs.rewrites import parse_prefix_rewrites, parse_rewrite
from ..runs.telemetry import require_live_extra
from . import (
    UsageError,
    add_root_argument,
    config_from_args,
    load_or_report,
    refuse_swallowed_paths,
)

if TYPE_CHECKING:
    from ..catalog.model import Catalog
    from ..live_check.report import LiveCheckReport

__all__ = [
    "HELP",
    "NOTHING_REQUIRED_NOTE",
    "REPORT_FORMATS",
    "SEVERITIES",
    "configure",
    "parse_fail_on",
    "run",
]

HELP = (
    "Check a run's logs (JSONL, TensorBoard, MLflow, W&B, CSV and five more formats) or a "
    "live job's OTLP or Prometheus telemetry against the catalog's rows."
)

SEVERITIES: Final = ("error", "warning")
"""Severities ``--fail-on`` takes: every finding kind of that severity."""


def parse_fail_on(values: list[str] | None) -> list[str]:
    """Flatten ``--fail-on a,b --fail-on c`` into kinds.

    ``all`` means every kind; a severity (``error``, ``warning``) every kind of
    that severity in :data:`~codegen.live_check.KINDS`.

    Raises:
        argparse.ArgumentTypeError: a name is neither a finding kind nor a severity.
    """
    kinds: list[str] = []
    for value in values or ():
        for item in value.split(","):
            name = item.strip().replace("-", "_")
            if not name:
                continue
            if name == "all":
                kinds.extend(FINDING_KINDS)
            elif name in SEVERITIES:
                kinds.extend(k for k in FINDING_KINDS if KINDS[k].severity.value == name)
            elif name in FINDING_KINDS:
                kinds.append(name)
            else:
                msg = (
                    f"unknown finding kind {item!r}; choose from all, error, warning, "
                    f"{', '.join(FINDING_KINDS)}"
                )
                raise argparse.ArgumentTypeError(msg)
    return sorted(set(kinds), key=FINDING_KINDS.index)


REPORT_FORMATS: Final = ("text", "json", "sarif", "github")
"""What ``--format`` takes."""


def _percent(text: str) -> float:
    """``--min-coverage``'s value: a number from 0 to 100 (a trailing ``%`` is allowed)."""
    try:
        value = float(text.strip().removesuffix("%"))
    except ValueError:
        value = -1.0
    if not 0 <= value <= 100:
        msg = f"expected a percentage from 0 to 100, got {text!r}"
        raise argparse.ArgumentTypeError(msg)
    return value


def configure(parser: argparse.ArgumentParser) -> None:
    """Add the inputs, the verdict, the judging options, live telemetry and the project."""
    parser.usage = "%(prog)s [options] RUN [RUN ...] | --otlp-listen HOST:PORT | --scrape URL"
    _add_inputs(parser)
    _add_verdict(parser)
    _add_judging(parser)
    add_live_arguments(parser)
    add_root_argument(parser)


def _add_inputs(parser: argparse.ArgumentParser) -> None:
    """RUN..., ``--input-format``, ``--run`` and ``--run-config``: what is read."""
    parser.add_argument(
        "log",
        nargs="*",
        metavar="RUN",
        help=(
            "a log file or run folder; several files or a quoted glob ('logs/rank*.jsonl') "
            "are one run of many workers; - reads stdin"
        ),
    )
    parser.add_argument(
        "--input-format",
        choices=tuple(INGESTERS),
        metavar="FORMAT",
        help=f"read the inputs as FORMAT (default: detected): {', '.join(INGESTERS)}",
    )
    parser.add_argument(
        "--run",
        action="append",
        metavar="RUN",
        help=(
            "judge only this run (id, name or folder) of an MLflow store, W&B or "
            "TensorBoard folder (repeatable)"
        ),
    )
    parser.add_argument(
        "--run-config",
        metavar="FILE",
        help=(
            "the run's configuration (JSON or YAML mapping) for inputs that do not log it; "
            "rows whose condition names config.<path> are judged against it"
        ),
    )


def _add_verdict(parser: argparse.ArgumentParser) -> None:
    """``--fail-on``, ``--min-coverage``, ``--format`` and ``--all``: what the report says."""
    parser.add_argument(
        "--fail-on",
        action="append",
        metavar="KINDS",
        help=(
            "exit 1 on these finding kinds (comma-separated, repeatable): kind names, "
            "a severity (error, warning) or all"
        ),
    )
    parser.add_argument(
        "--min-coverage",
        type=_percent,
        metavar="PERCENT",
        help="exit 1 when fewer than PERCENT %% of the rows that apply to the run were logged",
    )
    parser.add_argument(
        "--baseline-values",
        metavar="REPORT",
        help="a --format json report; open placeholder values new to it are findings",
    )
    parser.add_argument(
        "--format",
        choices=REPORT_FORMATS,
        default="text",
        help="report format: text (default), json, sarif (SARIF 2.1.0) or github (annotations)",
    )
    parser.add_argument(
        "--all",
        action="store_true",
        dest="show_all",
        help="list every teed row in the text report, judged or not",
    )


def _add_judging(parser: argparse.ArgumentParser) -> None:
    """``--loop``, ``--all-owners`` and the key rewrites: how the run is judged."""
    parser.add_argument(
        "--loop",
        metavar="NAME",
        help="judge the run as this declared loop (default: the one it names or suggests)",
    )
    parser.add_argument(
        "--all-owners",
        action="store_true",
        help="judge the rows of owners that logged nothing too (default: owners inactive)",
    )
    parser.add_argument(
        "--key-rewrite",
        action="append",
        metavar="FROM=TO",
        help=(
            "replace FROM with TO in every logged key (repeatable, after the key-rewrite "
            "key), e.g. _at_=@ for verl's MLflow keys"
        ),
    )
    parser.add_argument(
        "--key-prefix-rewrite",
        action="append",
        metavar="FROM=TO|TABLE",
        help=(
            "rewrite a key's start FROM to TO, first (repeatable); 'transformers' undoes "
            "the HF Trainer's train/ and eval/"
        ),
    )


_RUN_CONFIG_BYTES: Final = 16 * 1024 * 1024
"""Largest ``--run-config`` file read."""


def load_run_config(path: str) -> dict[str, object]:
    """The mapping at ``path`` (JSON, or YAML when it does not parse as JSON).

    Raises:
        OSError: The file cannot be read.
        ValueError: It is neither JSON nor YAML, or not a mapping.
    """
    import json  # noqa: PLC0415 - only for this flag

    import yaml  # noqa: PLC0415

    from ..safe_fs import read_input  # noqa: PLC0415
    from ..safe_yaml import YamlBombError, load_bounded  # noqa: PLC0415

    text = read_input(path, _RUN_CONFIG_BYTES).decode("utf-8", errors="replace")
    try:
        value: object = json.loads(text)
    except (ValueError, RecursionError):
        try:
            value = load_bounded(text)
        except YamlBombError as exc:
            msg = f"{path}: refused ({exc}); write the configuration out without aliases"
            raise ValueError(msg) from None
        except (yaml.YAMLError, RecursionError) as exc:
            msg = f"{path} is neither JSON nor YAML ({exc.__class__.__name__})"
            raise ValueError(msg) from None
    if not isinstance(value, dict):
        msg = f"{path} holds a {type(value).__name__}, not a mapping of configuration values"
        raise ValueError(msg)
    return {str(key): item for key, item in value.items()}


NOTHING_REQUIRED_NOTE: Final = (
    "note: --fail-on missing cannot fail with this catalog: no teed row is "
    "`requirement_level: required` or `conditionally_required`, and rows default to "
    "`recommended`, which a run may leave out; mark the rows every run must log "
    "`requirement_level: required` (docs/reference/catalog-format.md, 'Row fields')"
)
"""Said when ``--fail-on`` names ``missing`` and no row of the catalog can be missing."""


def _note_nothing_can_be_missing(values: list[str] | None, catalog: Catalog) -> None:
    """Warn that an explicit ``--fail-on missing`` is a no-op for this catalog.

    A newcomer's catalog leaves every row at the default level, so a run that never logs a
    declared key passed ``--fail-on undeclared,missing`` with no word why.
    """
    named = any(
        item.strip().replace("-", "_") == "missing"
        for value in values or ()
        for item in value.split(",")
    )
    levels = ("required", "conditionally_required")
    if named and not any(row.requirement_level in levels for f in catalog.files for row in f.teed):
        print(NOTHING_REQUIRED_NOTE, file=sys.stderr)


def _fail_on(values: list[str] | None) -> list[str]:
    try:
        return parse_fail_on(values)
    except argparse.ArgumentTypeError as exc:
        raise UsageError(f"--fail-on: {exc}") from None


def _refuse_conflicts(args: argparse.Namespace, logs: list[str], live: bool) -> None:
    """The flags that do not go together, each refused with what to do instead.

    Raises:
        UsageError: Two flags, or a flag and the inputs, exclude each other.
    """
    if live == bool(logs):
        msg = "give either log files (RUN ...) or live telemetry (--otlp-listen, --scrape)"
        raise UsageError(msg)
    if live:
        keys = "logged keys (log inputs)"
        for given, flag, what in (
            (args.run_config is not None, "--run-config", "log inputs"),
            (bool(args.run), "--run", "log inputs"),
            (bool(args.key_rewrite), "--key-rewrite", keys),
            (bool(args.key_prefix_rewrite), "--key-prefix-rewrite", keys),
        ):
            if given:
                msg = f"{flag} applies to {what}, not to what --otlp-listen and --scrape receive"
                raise UsageError(msg)
    elif args.interval or args.duration:
        raise UsageError("--interval and --duration apply to --otlp-listen and --scrape")
    if args.interval and not args.duration:
        raise UsageError("--interval needs --duration (how long to keep scraping)")
    if "-" in logs and len(logs) > 1:
        raise UsageError("- (stdin) cannot be combined with files")
    if logs == ["-"] and args.run:
        raise UsageError("--run selects runs of a store or folder input, not of stdin")


def _rewrites(
    args: argparse.Namespace, config: Config
) -> tuple[tuple[tuple[str, str], ...], tuple[tuple[str, str], ...]]:
    """The key and key-prefix rewrites: the table's, then the flags'."""
    try:
        rewrites = config.key_rewrites + tuple(parse_rewrite(r) for r in args.key_rewrite or ())
    except ValueError as exc:
        raise UsageError(f"--key-rewrite: {exc}") from None
    try:
        prefixes = config.key_prefix_rewrites + parse_prefix_rewrites(args.key_prefix_rewrite or ())
    except ValueError as exc:
        raise UsageError(f"--key-prefix-rewrite: {exc}") from None
    return rewrites, prefixes


def _run_config(path: str | None) -> dict[str, object] | None:
    if path is None:
        return None
    try:
        return load_run_config(path)
    except OSError as exc:
        raise UsageError(f"--run-config: cannot read {path}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise UsageError(f"--run-config: {exc}") from None


def _promoted(text: str | None) -> tuple[str, ...]:
    """``--promoted``'s names, or the shell's ``METRIC_CATALOG_PROMOTE``."""
    from metric_catalog.identity import promoted_names  # noqa: PLC0415 - stdlib only

    if text is None:
        return promoted_names()
    return tuple(dict.fromkeys(n.strip() for n in text.split(",") if n.strip()))


def _options(args: argparse.Namespace, config: Config, live: bool) -> CheckOptions:
    """The one :class:`CheckOptions` of this run, from the table and the flags.

    Live telemetry carries series, not logged keys: no rewrites, and the
    promoted identity attributes apply to it alone.
    """
    rewrites, prefixes = ((), ()) if live else _rewrites(args, config)
    return CheckOptions(
        all_owners=args.all_owners,
        loop=args.loop,
        input_format=args.input_format,
        key_rewrites=rewrites,
        key_prefix_rewrites=prefixes,
        run_config=None if live else _run_config(args.run_config),
        runs=tuple(dict.fromkeys(args.run or ())),
        promoted=_promoted(args.promoted) if live else (),
        baseline_values=_baseline_path(args, config),
    )


def _baseline_path(args: argparse.Namespace, config: Config) -> str | None:
    """``--baseline-values`` as given (cwd-relative), else the table's key under the root."""
    if args.baseline_values is not None:
        return str(args.baseline_values)
    if config.baseline_values is None:
        return None
    return str(config.root / config.baseline_values)


def _baseline(path: str | None, origin: str, root: Path | None) -> BaselineValues | None:
    """The baseline report's open placeholder values, read before any run is.

    ``origin`` names where the path came from in errors (the flag or the key); ``root``,
    when given, is the folder the file must resolve inside.

    Raises:
        UsageError: The file cannot be read or is not a report's ``open_values`` (exit 2).
    """
    if path is None:
        return None
    try:
        return load_baseline_values(path, root=root)
    except BaselineError as exc:
        raise UsageError(f"{origin}: {exc}") from None


def _refuse_unknown_loop(loop: str | None, catalog: Catalog) -> None:
    loops = sorted(declared.name for declared in catalog.loops())
    if loop is not None and loop not in loops:
        declared = ", ".join(loops) if loops else "none (declare them under 'loops:')"
        raise UsageError(f"--loop: unknown loop {loop!r}; declared loops: {declared}")


def _check_live(
    args: argparse.Namespace, catalog: Catalog, options: CheckOptions
) -> LiveCheckReport:
    """Receive and/or scrape until done (Ctrl-C ends an open ``--otlp-listen``), then judge."""
    stop = threading.Event()

    def interrupted(signum: int, frame: FrameType | None) -> None:
        stop.set()

    def listening(url: str) -> None:
        until = f"for {args.duration:g} s" if args.duration else "until Ctrl-C"
        print(f"live-check: receiving OTLP on {url}/v1/metrics {until}", file=sys.stderr)

    previous = signal.signal(signal.SIGINT, interrupted)
    try:
        records = gather(
            otlp=args.otlp,
            urls=args.scrape or (),
            interval=args.interval,
            duration=args.duration,
            stop=stop,
            on_listening=listening,
        )
        sources = [f"otlp {args.otlp[0]}:{args.otlp[1]}"] if args.otlp else []
        sources += args.scrape or []
        return check_records(records, catalog, options, source=", ".join(sources), multi=True)
    finally:
        signal.signal(signal.SIGINT, previous)


def _check_logs(logs: list[str], catalog: Catalog, options: CheckOptions) -> LiveCheckReport:
    """Judge the log inputs: stdin, one file, or many (per worker)."""
    if logs == ["-"]:
        return check_stream(sys.stdin.buffer, catalog, options, source="<stdin>")
    if len(logs) == 1 and not glob.has_magic(logs[0]):
        return check_file(logs[0], catalog, options)
    inputs = expand_inputs(logs)
    return check_paths(inputs.paths, catalog, options, duplicates=inputs.duplicates)


def _judge(
    args: argparse.Namespace, catalog: Catalog, options: CheckOptions, live: bool
) -> LiveCheckReport | int:
    """The report, or exit status 2 after an error line (an input that cannot be read)."""
    logs: list[str] = args.log
    try:
        return _check_live(args, catalog, options) if live else _check_logs(logs, catalog, options)
    except (LogInputError, ModuleNotFoundError) as exc:
        # ModuleNotFoundError: an input format's optional extra is missing (the message
        # names the extra to install), e.g. tensorboard for event files.
        print(f"error: {exc}", file=sys.stderr)
    except OSError as exc:
        if live:
            print(f"error: --otlp-listen: cannot listen: {exc.strerror or exc}", file=sys.stderr)
        else:
            print(
                f"error: cannot read {exc.filename or logs[0]}: {exc.strerror or exc}; pass the "
                "log file(s) or run folder(s) the run wrote",
                file=sys.stderr,
            )
    return 2


def run(args: argparse.Namespace) -> int:
    """Print the report; 1 when it fails, 2 on bad arguments or input.

    The report fails when a ``--fail-on`` kind occurred, when the input showed
    nothing the catalog declares, or when coverage is below ``--min-coverage``.
    An input abandoned part-way (an endless line, too many overlong lines) is
    bad input: the report is printed, then one error line per such input.

    Raises:
        UsageError: Flags that do not go together, or a flag's unusable value (exit 2).
    """
    fail_on = _fail_on(args.fail_on)
    config = config_from_args(args)
    refuse_swallowed_paths(args, "RUN")
    live = args.otlp is not None or bool(args.scrape)
    _refuse_conflicts(args, args.log, live)
    options = _options(args, config, live)
    catalog = load_or_report(config)
    if catalog is None:
        print("error: the catalog has errors; fix them before checking a run", file=sys.stderr)
        return 1
    _refuse_unknown_loop(args.loop, catalog)
    _note_nothing_can_be_missing(args.fail_on, catalog)
    if live:
        try:
            require_live_extra(otlp=args.otlp is not None, prometheus=bool(args.scrape))
        except ModuleNotFoundError as exc:
            raise UsageError(str(exc)) from None
    flag = args.baseline_values is not None
    # The table's key names a file of the project: kept inside its root (a symlink out of it
    # is refused unread); the flag names whatever file the user points at.
    baseline = _baseline(
        options.baseline_values,
        "--baseline-values" if flag else "baseline-values",
        None if flag else config.root,
    )
    report = _judge(args, catalog, options, live)
    if isinstance(report, int):
        return report
    if baseline is not None:
        report.findings.extend(new_open_value_findings(report, baseline))
    if args.min_coverage is not None:
        report.coverage.minimum = args.min_coverage / 100
    print(report.render(args.format, fail_on, show_all=args.show_all))
    for abandoned in report.abandoned:
        print(f"error: {abandoned}", file=sys.stderr)
    if report.abandoned:
        return 2
    return 0 if report.ok(fail_on) else 1
