"""Flags that do not go together exit 2 with one line naming them (``UsageError``, caught once).

And ``--fail-on`` takes severities besides finding kinds.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from codegen.cli import main
from codegen.commands import UsageError
from codegen.commands.live_check import parse_fail_on
from codegen.live_check import FINDING_KINDS, KINDS

REPO = Path(__file__).resolve().parents[2]
RUN = REPO / "tests" / "fixtures" / "evolution" / "run.jsonl"


def test_usage_error_is_a_value_error() -> None:
    assert issubclass(UsageError, ValueError)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["live-check"], "give either log files (RUN ...) or live telemetry"),
        (["live-check", str(RUN), "--otlp-listen", "127.0.0.1:0"], "give either log files"),
        (["live-check", "--scrape", "http://127.0.0.1:9/m", "--run", "x"], "--run applies to"),
        (
            ["live-check", "--scrape", "http://127.0.0.1:9/m", "--run-config", "c.json"],
            "--run-config applies",
        ),
        (
            ["live-check", "--scrape", "http://127.0.0.1:9/m", "--interval", "1"],
            "--interval needs --duration",
        ),
        (["live-check", str(RUN), "--duration", "1"], "apply to --otlp-listen and --scrape"),
        (["live-check", "-", str(RUN)], "- (stdin) cannot be combined"),
        (["live-check", "-", "--run", "x"], "--run selects runs of a store"),
        (
            ["live-check", str(RUN), "--fail-on", "nonsense"],
            "--fail-on: unknown finding kind 'nonsense'",
        ),
        (["live-check", str(RUN), "--key-rewrite", "nope"], "--key-rewrite:"),
        (["live-check", str(RUN), "--run-config", "missing.json"], "--run-config: cannot read"),
        (["live-check", str(RUN), "--loop", "no_such_loop"], "--loop: unknown loop 'no_such_loop'"),
        (["emit", "--loop", "grpo_sync"], "choose where the sample goes"),
        (["emit", "--jsonl", "x.jsonl", "--duration", "1"], "--duration applies to --prometheus"),
    ],
)
def test_flags_that_do_not_go_together_exit_2_with_one_error_line(
    argv: list[str],
    message: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    monkeypatch.chdir(REPO)
    assert main([*argv, "--root", str(REPO)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith("error: ")
    assert message in captured.err
    assert captured.err.count("\n") == 1


@pytest.mark.parametrize(
    ("given", "kinds"),
    [
        (["warning"], [k for k in FINDING_KINDS if KINDS[k].severity.value == "warning"]),
        (["error"], [k for k in FINDING_KINDS if KINDS[k].severity.value == "error"]),
        (["all"], list(FINDING_KINDS)),
        (["missing,undeclared"], ["undeclared", "missing"]),
        (["missing", "non-finite"], ["missing", "non_finite"]),
        (
            ["error,missing"],
            ["missing"] + [k for k in FINDING_KINDS if KINDS[k].severity.value == "error"],
        ),
    ],
)
def test_fail_on_takes_severities_besides_kinds(given: list[str], kinds: list[str]) -> None:
    assert parse_fail_on(given) == sorted(set(kinds), key=FINDING_KINDS.index)


def test_fail_on_warning_fails_a_run_with_a_warning_finding(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["live-check", str(RUN), "--root", str(REPO)]) == 0
    assert main(["live-check", str(RUN), "--root", str(REPO), "--fail-on", "warning"]) == 1


def test_an_unknown_fail_on_name_lists_the_severities_too() -> None:
    with pytest.raises(argparse.ArgumentTypeError, match="all, error, warning, undeclared"):
        parse_fail_on(["bogus"])
