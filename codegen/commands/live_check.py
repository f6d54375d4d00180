"""``metric-catalog live-check RUN.jsonl [MORE.jsonl | GLOB ...]``: was the catalog logged?

Several files or a glob (one file per worker) are checked together: presence
over the whole run, values per worker (see :mod:`codegen.live_check.workers`).
``--otlp HOST:PORT`` and ``--scrape URL`` check what a running job exports
instead (see :mod:`codegen.runs.live`).
"""

from __future__ import annotations

import argparse
import glob
import signal
import sys
import threading
from types import FrameType
from typing import TYPE_CHECKING, Final

from ..live_check import (
    FINDING_KINDS,
    INGESTERS,
    LogInputError,
    check_file,
    check_paths,
    check_records,
    check_stream,
    expand_inputs,
)
from ..runs.live import add_live_arguments, gather
from ..runs.rewrites import parse_prefix_rewrites, parse_rewrite
from ..runs.telemetry import require_live_extra
from . import (
    add_root_argument,
    config_from_args,
    load_or_report,
)

if TYPE_CHECKING:
    from ..catalog.model import Catalog
    from ..live_check.report import LiveCheckReport

__all__ = ["HELP", "configure", "parse_fail_on", "run"]

HELP = "Check a run's JSONL metrics log against the catalog's teed rows."


def parse_fail_on(values: list[str] | None) -> list[str]:
    """Flatten ``--fail-on a,b --fail-on c`` into kinds; ``all`` means every kind.

    Raises:
        argparse.ArgumentTypeError: a name is not a finding kind.
    """
    kinds: list[str] = []
    for value in values or ():
        for item in value.split(","):
            name = item.strip().replace("-", "_")
            if not name:
                continue
            if name == "all":
                kinds.extend(FINDING_KINDS)
            elif name in FINDING_KINDS:
                kinds.append(name)
            else:
                msg = f"unknown finding kind {item!r}; choose from all, {', '.join(FINDING_KINDS)}"
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
    """Add the log path, ``--fail-on``, ``--format`` and the catalog location."""
    parser.add_argument(
        "log",
        nargs="*",
        metavar="RUN.jsonl",
        help=(
            "JSONL written by the JsonlLogger; several files or a quoted glob "
            "('logs/run-rank*.jsonl') check a many-worker run per worker; - reads stdin "
            "(e.g. zcat run.jsonl.gz | ...)"
        ),
    )
    parser.add_argument(
        "--fail-on",
        action="append",
        metavar="KINDS",
        help=(
            "comma-separated finding kinds that make the exit code 1 (repeatable): "
            f"{', '.join(FINDING_KINDS)}, or all (default: none; report only)"
        ),
    )
    parser.add_argument(
        "--format",
        choices=REPORT_FORMATS,
        default="text",
        help=(
            "report format (default: text): json for dashboards, sarif (SARIF 2.1.0, for "
            "code scanning), github (workflow-command annotations in a GitHub Actions log)"
        ),
    )
    parser.add_argument(
        "--input-format",
        choices=tuple(INGESTERS),
        metavar="FORMAT",
        help=(
            "read every input as this format instead of detecting it per input: "
            + "; ".join(f"{name}: {ingester.description}" for name, ingester in INGESTERS.items())
        ),
    )
    parser.add_argument(
        "--min-coverage",
        type=_percent,
        metavar="PERCENT",
        help=(
            "fail (exit 1) when fewer than PERCENT %% of the teed rows that apply to the run's "
            "loop were logged (see coverage in the report)"
        ),
    )
    parser.add_argument(
        "--all",
        action="store_true",
        dest="show_all",
        help="list every teed row in the text report, also those the run was not judged on",
    )
    parser.add_argument(
        "--loop",
        metavar="NAME",
        help=(
            "judge the run as this declared training loop (e.g. grpo_sync) instead of the "
            "loop the log names (JsonlLogger(loop=...) or METRIC_CATALOG_LOOP) or its keys "
            "suggest; only required rows whose emitted_by lists it can be missing"
        ),
    )
    parser.add_argument(
        "--all-owners",
        action="store_true",
        help=(
            "judge unlogged rows that list no loop (no emitted_by) even when their owner "
            "logged nothing (default: list those owners as inactive, since an owner never "
            "imported declares nothing)"
        ),
    )
    parser.add_argument(
        "--key-rewrite",
        action="append",
        metavar="FROM=TO",
        help=(
            "replace the literal text FROM with TO in every key read from the inputs before "
            "matching it (repeatable, applied in order, after the key-rewrite rules of "
            "[tool.metric-catalog]), for a logging backend that mangles keys: verl's MLflow "
            "adapter logs mean@4 as mean_at_4, so --key-rewrite _at_=@; a key only its "
            "spelling as read matches keeps it"
        ),
    )
    parser.add_argument(
        "--key-prefix-rewrite",
        action="append",
        metavar="FROM=TO|TABLE",
        help=(
            "rewrite FROM at the start of a key read from the inputs to TO (the first rule "
            "that fits, once; repeatable, after the key-prefix-rewrite rules of "
            "[tool.metric-catalog]; applied before --key-rewrite), for a logging callback "
            "that prefixes every key; the table 'transformers' undoes the Hugging Face "
            "Trainer's W&B and TensorBoard callbacks (train/loss is loss, eval/loss eval_loss, "
            "test/loss test_loss)"
        ),
    )
    parser.add_argument(
        "--run-config",
        metavar="FILE",
        help=(
            "the run's configuration, a JSON or YAML mapping (torchtitan's saved job config, "
            "Hydra's .hydra/config.yaml), for inputs that do not log it (flat JSONL, "
            "TensorBoard, MLflow, trainer_state.json): rows whose condition or first_step "
            "names config.<path> are judged against it; it wins over a header line the log holds"
        ),
    )
    parser.add_argument(
        "--run",
        action="append",
        metavar="RUN",
        help=(
            "read only this run of an input holding several (repeatable): an MLflow store "
            "(mlruns/, an experiment folder, mlflow.db), a W&B folder (wandb/ or the project "
            "above it) or a TensorBoard log folder; RUN is a run's id, its name, or its folder "
            "(as given or its last part). Without it such runs are judged together as one "
            "run, and the report says so"
        ),
    )
    add_live_arguments(parser)
    add_root_argument(parser)


def load_run_config(path: str) -> dict[str, object]:
    """The mapping at ``path`` (JSON, or YAML when it does not parse as JSON).

    Raises:
        OSError: The file cannot be read.
        ValueError: It is neither JSON nor YAML, or not a mapping.
    """
    import json  # noqa: PLC0415 - only for this flag

    import yaml  # noqa: PLC0415

    with open(path, encoding="utf-8") as handle:
        text = handle.read()
    try:
        value: object = json.loads(text)
    except ValueError:
        try:
            value = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            msg = f"{path} is neither JSON nor YAML ({exc.__class__.__name__})"
            raise ValueError(msg) from None
    if not isinstance(value, dict):
        msg = f"{path} holds a {type(value).__name__}, not a mapping of configuration values"
        raise ValueError(msg)
    return {str(key): item for key, item in value.items()}


def _check_live(args: argparse.Namespace, catalog: Catalog) -> LiveCheckReport:
    """Receive and/or scrape until done (Ctrl-C ends an open-ended ``--otlp``), then judge."""
    from metric_catalog.identity import promoted_names  # noqa: PLC0415 - stdlib only

    promoted = (
        promoted_names()
        if args.promoted is None
        else tuple(dict.fromkeys(n.strip() for n in args.promoted.split(",") if n.strip()))
    )
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
        return check_records(
            records,
            catalog,
            source=", ".join(sources),
            all_owners=args.all_owners,
            loop=args.loop,
            promoted=promoted,
            multi=True,
        )
    finally:
        signal.signal(signal.SIGINT, previous)


def run(args: argparse.Namespace) -> int:
    """Print the report; 1 when it fails, 2 on bad arguments or input.

    The report fails when a ``--fail-on`` kind occurred, when the input showed
    nothing the catalog declares, or when coverage is below ``--min-coverage``.

    An input abandoned part-way (an endless line, too many overlong lines) is
    bad input: the report is printed, then one error line per such input.
    """
    try:
        fail_on = parse_fail_on(args.fail_on)
    except argparse.ArgumentTypeError as exc:
        print(f"error: --fail-on: {exc}", file=sys.stderr)
        return 2
    config = config_from_args(args)
    try:
        rewrites = config.key_rewrites + tuple(
            parse_rewrite(rule) for rule in args.key_rewrite or ()
        )
    except ValueError as exc:
        print(f"error: --key-rewrite: {exc}", file=sys.stderr)
        return 2
    try:
        prefix_rewrites = config.key_prefix_rewrites + parse_prefix_rewrites(
            args.key_prefix_rewrite or ()
        )
    except ValueError as exc:
        print(f"error: --key-prefix-rewrite: {exc}", file=sys.stderr)
        return 2
    catalog = load_or_report(config)
    if catalog is None:
        print("error: the catalog has errors; fix them before checking a run", file=sys.stderr)
        return 1
    logs: list[str] = args.log
    live = args.otlp is not None or bool(args.scrape)
    if live == bool(logs):
        print(
            "error: give either log files (RUN.jsonl ...) or live telemetry (--otlp, --scrape)",
            file=sys.stderr,
        )
        return 2
    run_config: dict[str, object] | None = None
    if args.run_config is not None:
        if live:
            print(
                "error: --run-config applies to log inputs, not to --otlp or --scrape",
                file=sys.stderr,
            )
            return 2
        try:
            run_config = load_run_config(args.run_config)
        except OSError as exc:
            print(
                f"error: --run-config: cannot read {args.run_config}: {exc.strerror or exc}",
                file=sys.stderr,
            )
            return 2
        except ValueError as exc:
            print(f"error: --run-config: {exc}", file=sys.stderr)
            return 2
    selected: tuple[str, ...] = tuple(dict.fromkeys(args.run or ()))
    if live and selected:
        print("error: --run applies to log inputs, not to --otlp or --scrape", file=sys.stderr)
        return 2
    if live and (args.key_rewrite or args.key_prefix_rewrite):
        flag = "--key-rewrite" if args.key_rewrite else "--key-prefix-rewrite"
        print(
            f"error: {flag} applies to logged keys (log inputs), not to the series "
            "--otlp and --scrape receive",
            file=sys.stderr,
        )
        return 2
    if not live and (args.interval or args.duration):
        print("error: --interval and --duration apply to --otlp and --scrape", file=sys.stderr)
        return 2
    if args.interval and not args.duration:
        print("error: --interval needs --duration (how long to keep scraping)", file=sys.stderr)
        return 2
    if "-" in logs and len(logs) > 1:
        print("error: - (stdin) cannot be combined with files", file=sys.stderr)
        return 2
    loops = sorted(loop.name for loop in catalog.loops())
    if args.loop is not None and args.loop not in loops:
        declared = ", ".join(loops) if loops else "none (declare them under 'loops:')"
        print(
            f"error: --loop: unknown loop {args.loop!r}; declared loops: {declared}",
            file=sys.stderr,
        )
        return 2
    if live:
        try:
            require_live_extra(otlp=args.otlp is not None, prometheus=bool(args.scrape))
        except ModuleNotFoundError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
    try:
        if live:
            report = _check_live(args, catalog)
        elif logs == ["-"] and selected:
            print(
                "error: --run selects runs of a store or folder input, not of stdin",
                file=sys.stderr,
            )
            return 2
        elif logs == ["-"]:
            report = check_stream(
                sys.stdin.buffer,
                catalog,
                source="<stdin>",
                all_owners=args.all_owners,
                loop=args.loop,
                input_format=args.input_format,
                key_rewrites=rewrites,
                run_config=run_config,
                key_prefix_rewrites=prefix_rewrites,
            )
        elif len(logs) == 1 and not glob.has_magic(logs[0]):
            report = check_file(
                logs[0],
                catalog,
                all_owners=args.all_owners,
                loop=args.loop,
                input_format=args.input_format,
                key_rewrites=rewrites,
                run_config=run_config,
                runs=selected,
                key_prefix_rewrites=prefix_rewrites,
            )
        else:
            inputs = expand_inputs(logs)
            report = check_paths(
                inputs.paths,
                catalog,
                all_owners=args.all_owners,
                loop=args.loop,
                input_format=args.input_format,
                duplicates=inputs.duplicates,
                key_rewrites=rewrites,
                run_config=run_config,
                runs=selected,
                key_prefix_rewrites=prefix_rewrites,
            )
    except (LogInputError, ModuleNotFoundError) as exc:
        # ModuleNotFoundError: an input format's optional extra is missing (the message
        # names the extra to install), e.g. tensorboard for event files.
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        if live:
            print(f"error: --otlp: cannot listen: {exc.strerror or exc}", file=sys.stderr)
            return 2
        print(
            f"error: cannot read {exc.filename or logs[0]}: {exc.strerror or exc}; pass the "
            "JSONL file(s) the run's JsonlLogger wrote",
            file=sys.stderr,
        )
        return 2
    if args.min_coverage is not None:
        report.coverage.minimum = args.min_coverage / 100
    print(report.render(args.format, fail_on, show_all=args.show_all))
    for abandoned in report.abandoned:
        print(f"error: {abandoned}", file=sys.stderr)
    if report.abandoned:
        return 2
    return 0 if report.ok(fail_on) else 1
