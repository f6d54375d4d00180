"""``metric-catalog scan``: what source code logs, read statically, against the catalog."""

from __future__ import annotations

import ast
import json
import os
import textwrap
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from codegen.catalog.model import VALUE_TYPES, Catalog
from codegen.catalog.pipeline import load_and_check
from codegen.cli import main
from codegen.config import ConfigError, parse_table
from codegen.scan import scanner
from codegen.scan.calls import DEFAULT_SCAN_CALLS, Argument, merge_calls, parse_scan_call
from codegen.scan.scanner import ScanReport, iter_sources, scan
from codegen.scan.values import NON_SCALAR_VALUES

FIXTURES = Path(__file__).parents[1] / "fixtures" / "scan"

ROWS = """\
owner: app.train
module: app_train
description: Rows of the scan tests.
prefix: train
attributes:
  - name: rl.stage
    type: string
    description: A timed stage of the step.
    max_cardinality: "50"
teed:
  - logger_key: loss
    name: rl.policy.loss
    kind: gauge
    unit: "1"
    description: Training loss over the step's batch.
  - logger_key: grad_norm
    name: rl.grad_norm
    kind: gauge
    unit: "1"
    description: Gradient norm of the policy update.
  - logger_key: "{rl.stage}_time_s"
    prefix: timing
    name: rl.stage.duration
    kind: gauge
    unit: s
    description: Wall clock of one stage of the step.
    attributes: [{ref: rl.stage}]
  - logger_key: actor/pg_loss
    prefix: ""
    name: rl.actor.pg_loss
    kind: gauge
    unit: "1"
    description: Policy-gradient loss reduced over micro-batches.
  - logger_key: gen
    prefix: timing_s
    name: rl.generation.duration
    kind: gauge
    unit: s
    description: Wall clock of rollout generation in the step.
"""


@pytest.fixture(scope="module")
def catalog(tmp_path_factory: pytest.TempPathFactory) -> Catalog:
    """The catalog of :data:`ROWS`."""
    folder = tmp_path_factory.mktemp("catalog")
    (folder / "train.yaml").write_text(ROWS, encoding="utf-8")
    result = load_and_check([folder / "train.yaml"], root=folder, lint=False)
    assert result.ok, result.diagnostics
    return result.catalog


def _scan(tmp_path: Path, catalog: Catalog, files: dict[str, str], **kwargs: object) -> ScanReport:
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    return scan([tmp_path], catalog, cwd=tmp_path, **kwargs)  # type: ignore[arg-type]


def _found(report: ScanReport, code: str | None = None) -> list[str]:
    """``path:line: CODE`` of each finding (of ``code`` only, if given), sorted."""
    return sorted(
        f"{d.position.path}:{d.position.line}: {d.code}"
        for d in report.diagnostics
        if d.position is not None and (code is None or d.code == code)
    )


def _messages(report: ScanReport, code: str) -> list[str]:
    return [d.message for d in report.diagnostics if d.code == code]


# --- what is resolved: one snippet per construct ------------------------------------

RESOLVED = [
    pytest.param(
        'logger.log_metrics({"loss": 1, "grad_norm": 2}, 3, prefix="train")', id="literal"
    ),
    pytest.param(
        'logger.log_metrics(dict(loss=1, grad_norm=2), 3, prefix="train")', id="dict-call"
    ),
    pytest.param(
        """\
        m = {}
        m["loss"] = 1
        m.update({"grad_norm": 2})
        logger.log_metrics(m, 3, prefix="train")
        """,
        id="built-in-function",
    ),
    pytest.param(
        """\
        m = {"loss": 1}
        m.setdefault("grad_norm", 2)
        logger.log_metrics(metrics=m, step=3, prefix="train")
        """,
        id="keywords-setdefault",
    ),
    pytest.param(
        """\
        m = {"loss": 1}
        m |= {"grad_norm": 2}
        for k, v in m.items():
            m[k] = float(v)
        logger.log_metrics(m, 3, "train")
        """,
        id="or-assign-rewrite-loop-positional-prefix",
    ),
    pytest.param(
        """\
        LOSS = "loss"
        class Keys:
            GRAD = "grad" + "_norm"
        logger.log_metrics({LOSS: 1, Keys.GRAD: 2}, 3, prefix="tr" + "ain")
        """,
        id="constants-and-concatenation",
    ),
    pytest.param(
        """\
        def f(logger, timing):
            logger.log_metrics({f"{k}_time_s": v for k, v in timing.items()}, 1, prefix="timing")
            logger.log_metrics({"loss": 1, "grad_norm": 2}, 1, prefix="train")
        f(None, {"gen": 1.0, "ref": 2.0})
        """,
        id="f-string-family-through-the-caller",
    ),
    pytest.param(
        """\
        def f(logger, name):
            prefix = "actor"
            logger.log({prefix + "/" + "pg_loss": 1, "timing_s/" + "gen": 2})
            logger.log_metrics({"loss": 1, "grad_norm": 2}, 1, prefix="train")
        from verl.utils.tracking import Tracking
        logger = Tracking("p", "e")
        """,
        id="flat-keys-through-tracking-instance",
    ),
    pytest.param(
        """\
        import wandb as wb
        wb.log({"actor/pg_loss": 1})
        for stage in ("gen",):
            wb.log({f"timing_s/{stage}": 2})
        wb.log(data={"train/loss": 1, "train/grad_norm": 2})
        """,
        id="wandb-alias-loop-over-literals",
    ),
    pytest.param(
        """\
        class Module:
            def step(self):
                out = self.metrics() if self.training else {}
                self.log_dict(out | {"actor/pg_loss": 0})

            def metrics(self):
                return {"train/loss": 1, "train/grad_norm": 2}
        """,
        id="method-return-lightning",
    ),
    pytest.param(
        """\
        from torch.utils.tensorboard import SummaryWriter
        writer = SummaryWriter()
        writer.add_scalar("train/loss", 1, 0)
        writer.add_scalar(tag="train/grad_norm", scalar_value=2)
        """,
        id="single-key-call",
    ),
]


@pytest.mark.parametrize("code", RESOLVED)
def test_scan_resolves_keys_built_in_common_ways(
    tmp_path: Path, catalog: Catalog, code: str
) -> None:
    report = _scan(tmp_path, catalog, {"train.py": code}, unlogged=False)
    assert report.diagnostics == []
    assert report.keys >= 1


def test_scan_follows_a_dict_returned_by_a_function_of_another_scanned_module(
    tmp_path: Path, catalog: Catalog
) -> None:
    files = {
        "pkg/__init__.py": "",
        "pkg/metrics.py": """\
            NAMES = ("loss", "grad_norm")
            def compute(batch):
                out = {}
                for name in NAMES:
                    out[name] = batch[name]
                out["entropy"] = 0.0
                return out
            """,
        "pkg/loop.py": """\
            from .metrics import compute
            from pkg import metrics as m
            def train(logger, batch):
                logger.log_metrics(compute(batch), 1, prefix="train")
                logger.log_metrics(m.compute(batch), 1, prefix="train")
            """,
    }
    report = _scan(tmp_path, catalog, files, unlogged=False)
    assert _found(report) == ["pkg/metrics.py:6: SCAN_UNDECLARED"]
    (message,) = _messages(report, "SCAN_UNDECLARED")
    assert "'entropy' with prefix 'train'" in message
    assert "pkg/loop.py:4:" in message  # the call that logs it


def test_scan_resolves_keys_and_prefixes_written_with_generated_constants(
    tmp_path: Path, catalog: Catalog
) -> None:
    files = {
        "gen/app_train.py": """\
            from typing import Final
            LOSS: Final = TeedMetric(logger_key="loss", name="rl.policy.loss", prefix="train")
            LOSS_KEY: Final = "loss"
            GRAD_NORM_KEY: Final = "grad_norm"
            """,
        "app.py": """\
            from gen import app_train
            from gen.app_train import GRAD_NORM_KEY
            def step(logger):
                metrics = {app_train.LOSS_KEY: 1, GRAD_NORM_KEY: 2}
                logger.log_metrics(metrics, 1, prefix=app_train.LOSS.prefix)
            """,
    }
    report = _scan(tmp_path, catalog, files, unlogged=False)
    assert report.diagnostics == []
    assert report.keys == 2


UNRESOLVED = [
    pytest.param(
        "logger.log_metrics(reduce(out), 1, prefix='train')",
        "a dict built by a call to `reduce(...)`",
        id="unknown-call",
    ),
    pytest.param(
        "logger.log_metrics(out['metrics'], 1, prefix='train')",
        "a dict read from `out['metrics']`",
        id="subscript",
    ),
    pytest.param(
        "def f(logger, m):\n    logger.log_metrics(m, 1, prefix='train')",
        "the keys of the parameter(s) m of `f`, which no scanned call passes",
        id="parameter",
    ),
    pytest.param(
        "m = {}\nfor k in names():\n    m[k] = 1\nlogger.log_metrics(m, 1, prefix='train')",
        "which keys key '{k}' with prefix 'train'",
        id="variable-key",
    ),
    pytest.param(
        "logger.log_metrics({'loss': 1}, 1, prefix=choose())",
        "the prefix `choose()`",
        id="prefix",
    ),
    pytest.param(
        "logger.log_metrics(*args)",
        "passed by * or **",
        id="star-args",
    ),
    pytest.param(
        "logger.log_metrics({'%s_x' % a: 1}, 1, prefix='train')",
        "which keys key '{a}_x' with prefix 'train'",
        id="percent-format",
    ),
]


@pytest.mark.parametrize(("code", "what"), UNRESOLVED)
def test_scan_reports_what_it_cannot_resolve_with_its_position(
    tmp_path: Path, catalog: Catalog, code: str, what: str
) -> None:
    report = _scan(tmp_path, catalog, {"train.py": code}, unlogged=False)
    messages = _messages(report, "SCAN_UNRESOLVED")
    assert messages, report.diagnostics
    assert any(what in message for message in messages), messages
    assert all(d.position is not None and d.position.line >= 1 for d in report.diagnostics)


def test_scan_reports_an_f_string_that_only_shares_keys_with_literal_rows(
    tmp_path: Path, catalog: Catalog
) -> None:
    code = (
        "def f(logger: Tracking):\n"
        "    logger.log({f'timing_s/{k}': v for k, v in load().items()})\n"
    )
    report = _scan(tmp_path, catalog, {"a.py": code})
    assert "a.py:2: SCAN_UNRESOLVED" in _found(report)
    message = _messages(report, "SCAN_UNRESOLVED")[0]
    assert "timing_s/gen" in message
    assert "not credited" in message
    # A guess credits no row: the row the hole might stand for is still unlogged.
    assert any("'timing_s/gen'" in m for m in _messages(report, "SCAN_UNLOGGED"))


def test_scan_reports_undeclared_keys_at_the_key_and_names_the_call(
    tmp_path: Path, catalog: Catalog
) -> None:
    code = """\
        def step(logger):
            metrics = {"loss": 1}
            metrics["bogus"] = 2
            metrics[f"extra/{1 + 1}"] = 3
            logger.log_metrics(metrics, 7, prefix="train")
        """
    report = _scan(tmp_path, catalog, {"a.py": code}, unlogged=False)
    assert _found(report) == ["a.py:3: SCAN_UNDECLARED", "a.py:4: SCAN_UNRESOLVED"]
    first = min(report.diagnostics, key=lambda d: d.sort_key())
    assert first.position is not None
    assert first.position.column == 13
    assert "'bogus' with prefix 'train'" in first.message
    assert "logger.log_metrics" in first.message


@pytest.mark.parametrize(
    ("written", "hint"),
    [
        pytest.param('{"samples": wandb.Table(columns=["a"])}', "table", id="dict-item"),
        pytest.param('{"train/%s" % k: v for k, v in {"frame": wandb.Image(x)}.items()}', "image",
                     id="rewritten-by-a-comprehension"),
        pytest.param('{"hist": trackio.Histogram(v)}', "histogram", id="another-tracker"),
        pytest.param('{"clip": wandb.Video(v)}', "media", id="media"),
        pytest.param('{"count": len(rows)}', None, id="a-number"),
        pytest.param('{"samples": Table(rows)}', None, id="a-bare-name-may-be-anything"),
    ],
)  # fmt: skip
def test_an_undeclared_key_logging_a_tracker_object_is_told_the_value_type_to_declare(
    tmp_path: Path, catalog: Catalog, written: str, hint: str | None
) -> None:
    code = f"import wandb\nimport trackio\n\ndef log(x, v, rows):\n    wandb.log({written})\n"
    report = _scan(tmp_path, catalog, {"a.py": code}, unlogged=False)
    [message] = _messages(report, "SCAN_UNDECLARED")
    if hint is None:
        assert "value_type" not in message
    else:
        assert f"value_type: {hint} (its value is a `" in message


def test_every_value_type_scan_suggests_is_a_non_scalar_value_type_of_the_catalog() -> None:
    assert set(NON_SCALAR_VALUES.values()) <= set(VALUE_TYPES) - {"number", "int"}


def test_a_key_a_subscript_writes_keeps_the_value_type_of_what_it_is_given(
    tmp_path: Path, catalog: Catalog
) -> None:
    code = """\
        import wandb

        def log(rows):
            metrics = {}
            metrics["samples"] = wandb.Table(data=rows)
            wandb.log(metrics)
        """
    report = _scan(tmp_path, catalog, {"a.py": code}, unlogged=False)
    [message] = _messages(report, "SCAN_UNDECLARED")
    assert "value_type: table (its value is a `wandb.Table(...)`, not a number)" in message


def test_scan_warns_about_rows_no_scanned_code_logs(tmp_path: Path, catalog: Catalog) -> None:
    report = _scan(tmp_path, catalog, {"a.py": 'log_metrics({"loss": 1}, 0, prefix="train")'})
    unlogged = _messages(report, "SCAN_UNLOGGED")
    assert len(unlogged) == 4
    assert not any("rl.policy.loss" in message for message in unlogged)


def test_scan_drops_findings_on_lines_marked_ignore(tmp_path: Path, catalog: Catalog) -> None:
    code = 'log_metrics({"bogus": 1}, 0, prefix="train")  # metric-catalog: ignore\n'
    report = _scan(tmp_path, catalog, {"a.py": code}, unlogged=False)
    assert report.diagnostics == []


def test_scan_skips_a_logging_function_forwarding_its_own_parameter(
    tmp_path: Path, catalog: Catalog
) -> None:
    code = """\
        class Logger:
            def log_metrics(self, metrics, step, prefix=""):
                for backend in self.backends:
                    backend.log_metrics(metrics, step, prefix)
        """
    report = _scan(tmp_path, catalog, {"a.py": code}, unlogged=False)
    assert report.diagnostics == []


def test_scan_matches_a_name_that_only_looks_like_a_logging_call_by_its_arguments(
    tmp_path: Path, catalog: Catalog
) -> None:
    # math.log is not wandb.log; a log_metrics without a metrics argument logs nothing.
    code = "import math\nmath.log(2)\nlog_metrics()\n"
    report = _scan(tmp_path, catalog, {"a.py": code}, unlogged=False)
    assert report.diagnostics == []
    assert report.calls == 0


# --- hostile inputs -------------------------------------------------------------------


def test_scan_reports_a_file_that_does_not_parse_and_scans_the_others(
    tmp_path: Path, catalog: Catalog
) -> None:
    files = {
        "a_bad.py": "def broken(:\n    pass\n",
        "b_good.py": 'log_metrics({"bogus": 1}, 0, prefix="train")\n',
    }
    report = _scan(tmp_path, catalog, files, unlogged=False)
    assert _found(report) == ["a_bad.py:1: SCAN_SYNTAX", "b_good.py:1: SCAN_UNDECLARED"]


@pytest.mark.parametrize(
    ("raw", "code"),
    [
        pytest.param(b'x = "\xe9"\n', "SCAN_SYNTAX", id="not-utf8"),
        pytest.param(b"x = 1\x00\n", "SCAN_SYNTAX", id="null-byte"),
        pytest.param(b"(" * 300 + b")" * 300 + b"\n", "SCAN_SYNTAX", id="too-nested"),
        pytest.param(b'# coding: latin-1\nx = "\xe9"\n', None, id="latin1-with-cookie"),
        pytest.param(b"\xef\xbb\xbfx = 1\n", None, id="utf8-bom"),
        # Scoping errors Python refuses when compiling, which a parse accepts: no finding.
        pytest.param(b"nonlocal x\n", None, id="nonlocal-at-module-level"),
        pytest.param(b"def f(a):\n    global a\n", None, id="parameter-and-global"),
        pytest.param(b"def f():\n    from os import *\n", None, id="star-import-in-function"),
    ],
)
@pytest.mark.parametrize("logs", [False, True], ids=["calls-no-logging", "logs"])
def test_scan_survives_hostile_bytes(
    tmp_path: Path, catalog: Catalog, raw: bytes, code: str | None, logs: bool
) -> None:
    # A file calling no logging function is checked without a tree, one logging is parsed:
    # the two give the same findings.
    call = b'\nlog_metrics({"loss": 1}, 0, prefix="train")\n' if logs else b""
    (tmp_path / "a.py").write_bytes(raw + call)
    report = scan([tmp_path], catalog, cwd=tmp_path, unlogged=False)
    assert [d.code for d in report.diagnostics] == ([code] if code else [])
    assert report.files == 1


def test_a_file_whose_tree_cannot_be_built_when_first_needed_is_reported(
    tmp_path: Path, catalog: Catalog, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A file the syntax check passes whose tree is too deep to build (Python 3.12+ refuses
    # some; simulated here): it reads as empty where it is needed, and is reported.
    parse = ast.parse
    marker = "# too " + "deep"  # not in this file's text: pytest parses it too

    def too_deep(source: str | bytes, *args: Any, **kwargs: Any) -> ast.Module:
        if marker.encode() in (source if isinstance(source, bytes) else source.encode()):
            raise RecursionError("maximum recursion depth exceeded during ast construction")
        tree: ast.Module = parse(source, *args, **kwargs)
        return tree

    monkeypatch.setattr(ast, "parse", too_deep)
    files = {
        "helpers.py": marker + '\ndef metrics():\n    return {"loss": 1}\n',
        "train.py": 'from helpers import metrics\nlog_metrics(metrics(), 0, prefix="train")\n',
    }
    report = _scan(tmp_path, catalog, files, unlogged=False)
    assert _found(report, "SCAN_SYNTAX") == ["helpers.py:1: SCAN_SYNTAX"]
    assert "maximum recursion depth" in _messages(report, "SCAN_SYNTAX")[0]


def test_scan_skips_a_file_over_the_size_limit(
    tmp_path: Path, catalog: Catalog, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(scanner, "MAX_FILE_BYTES", 100)
    (tmp_path / "big.py").write_text("x = 1\n" * 100, encoding="utf-8")
    report = scan([tmp_path], catalog, cwd=tmp_path, unlogged=False)
    assert _found(report) == ["big.py:0: SCAN_UNREADABLE"]


def test_scan_reads_a_file_larger_than_its_stat_said_whole_and_still_caps_it(
    tmp_path: Path, catalog: Catalog, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A file grown since it was stat'ed (or a /proc-like file reporting 0 bytes): the read
    # goes on past the stat's size, up to the limit (``(`` alone would not parse).
    monkeypatch.setattr(scanner, "MAX_FILE_BYTES", 100)
    (tmp_path / "a.py").write_text("(1)\n", encoding="utf-8")
    (tmp_path / "big.py").write_text("x = 1\n" * 100, encoding="utf-8")
    real_fstat = os.fstat

    def fstat_saying_empty(fd: int) -> os.stat_result:
        fields = tuple(real_fstat(fd))
        return os.stat_result((*fields[:6], 0, *fields[7:10]))

    monkeypatch.setattr(os, "fstat", fstat_saying_empty)
    report = scan([tmp_path], catalog, cwd=tmp_path, unlogged=False)
    assert _found(report) == ["big.py:0: SCAN_UNREADABLE"]
    assert report.files == 1


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symbolic links")
def test_scan_walk_survives_symlink_loops_and_reads_each_file_once(tmp_path: Path) -> None:
    (tmp_path / "pkg" / "sub").mkdir(parents=True)
    (tmp_path / "pkg" / "sub" / "a.py").write_text("x = 1\n", encoding="utf-8")
    (tmp_path / "pkg" / "sub" / "loop").symlink_to(tmp_path / "pkg")
    (tmp_path / "pkg" / "again").symlink_to(tmp_path / "pkg" / "sub")
    (tmp_path / "pkg" / "alias.py").symlink_to(tmp_path / "pkg" / "sub" / "a.py")
    (tmp_path / "pkg" / "dangling.py").symlink_to(tmp_path / "missing.py")
    (tmp_path / ".venv").mkdir()
    (tmp_path / ".venv" / "lib.py").write_text("x = 1\n", encoding="utf-8")
    found = list(iter_sources([tmp_path, tmp_path / "pkg"]))
    reals = [real for _, real in found]
    assert len(reals) == len(set(reals)) == 2
    assert {Path(real).name for real in reals} == {"a.py", "missing.py"}


# --- the command ------------------------------------------------------------------------


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_scan_command_on_verl_shaped_code(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = FIXTURES / "verl"
    monkeypatch.chdir(root)
    code, out, _err = _run(capsys, "scan", "--no-cache", "--format", "json")
    assert code == 1
    report = json.loads(out)
    found = sorted(
        (f["code"], f["path"], f["line"])
        for f in report["findings"]
        if f["code"] != "SCAN_UNLOGGED"
    )
    assert found == [
        ("SCAN_UNDECLARED", "verl/trainer/ppo/metric_utils.py", 30),  # response_length/clip_ratio
        ("SCAN_UNDECLARED", "verl/trainer/ppo/metric_utils.py", 54),  # perf/max_memory_...
        ("SCAN_UNDECLARED", "verl/trainer/ppo/ray_trainer.py", 48),  # training/lr_scale
        ("SCAN_UNRESOLVED", "verl/trainer/ppo/metric_utils.py", 41),  # timing_per_token_ms/{name}
        ("SCAN_UNRESOLVED", "verl/trainer/ppo/ray_trainer.py", 18),  # val-aux/{data_source}/...
        ("SCAN_UNRESOLVED", "verl/trainer/ppo/ray_trainer.py", 18),  # val-core/{data_source}/...
        ("SCAN_UNRESOLVED", "verl/trainer/ppo/ray_trainer.py", 36),  # critic_output.meta_info
        ("SCAN_UNRESOLVED", "verl/trainer/ppo/ray_trainer.py", 39),  # actor_output.meta_info
    ]
    # Keys with holes credit no row, open families included: those rows are unlogged.
    unlogged = [f for f in report["findings"] if f["code"] == "SCAN_UNLOGGED"]
    assert [f["message"].split(" (row")[0] for f in unlogged] == [
        "no scanned code logs 'timing_s/{rl.stage}'",
        "no scanned code logs 'timing_per_token_ms/{rl.stage}'",
        "no scanned code logs 'val-core/{rl.data_source}/{rl.variable}/{rl.statistic}'",
        "no scanned code logs 'actor/pg_loss'",
    ]
    assert report["calls"] == 2
    assert report["errors"] == 3


def test_scan_command_on_nemo_rl_shaped_code(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(FIXTURES / "nemo_rl")
    code, out, err = _run(capsys, "scan", "--no-cache")
    assert code == 1
    lines = out.splitlines()
    assert sum("error[SCAN_UNDECLARED]" in line for line in lines) == 2
    assert any(
        line.startswith(
            "nemo_rl/algorithms/utils.py:10:13: error[SCAN_UNDECLARED]: key "
            "'avg_turns_per_sample' with prefix 'train'"
        )
        for line in lines
    )
    assert any("validation" in line and "'avg_length'" in line for line in lines)
    assert any("`timer.get_timing_metrics(...)`" in line for line in lines)
    assert any("`train_results['all_mb_metrics']`" in line for line in lines)
    assert "7 file(s), 4 logging call(s)" in err


def test_scan_command_exit_codes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "catalog").mkdir()
    (tmp_path / "catalog" / "train.yaml").write_text(ROWS, encoding="utf-8")
    (tmp_path / "pyproject.toml").write_text("[tool.metric-catalog]\n", encoding="utf-8")
    src = tmp_path / "src"
    src.mkdir()
    (src / "a.py").write_text('log_metrics({"loss": 1}, 0, prefix="train")\n', encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert _run(capsys, "scan", "src", "--no-unlogged")[0] == 0
    assert _run(capsys, "scan", "src")[0] == 0  # unlogged rows warn
    assert _run(capsys, "scan", "src", "--warnings-as-errors")[0] == 1
    code, _, err = _run(capsys, "scan", "nowhere")
    assert code == 2
    assert "no such file or folder: nowhere" in err
    (src / "b.py").write_text('log_metrics({"nope": 1}, 0, prefix="train")\n', encoding="utf-8")
    assert _run(capsys, "scan", "src", "--no-unlogged")[0] == 1


def test_scan_calls_configured_in_pyproject_are_scanned(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "catalog").mkdir()
    (tmp_path / "catalog" / "train.yaml").write_text(ROWS, encoding="utf-8")
    (tmp_path / "pyproject.toml").write_text(
        '[tool.metric-catalog]\nscan-calls = [{call = "emit", metrics = [1, "values"], '
        'prefix = "group"}]\n',
        encoding="utf-8",
    )
    (tmp_path / "a.py").write_text(
        'emit(7, {"loss": 1}, group="train")\nemit(7, values={"nope": 1}, group="train")\n',
        encoding="utf-8",
    )
    monkeypatch.chdir(tmp_path)
    code, out, _ = _run(capsys, "scan", "a.py", "--no-unlogged")
    assert code == 1
    assert out.splitlines()[0].startswith("a.py:2:17: error[SCAN_UNDECLARED]: key 'nope'")


@pytest.mark.parametrize(
    ("entry", "problem"),
    [
        ({"call": "x"}, "exactly one of metrics"),
        ({"call": "x", "metrics": 0, "key": 1}, "exactly one of metrics"),
        ({"call": "x y", "metrics": 0}, "not a dotted name"),
        ({"call": "x", "metrics": -1}, "position >= 0"),
        ({"call": "x", "metrics": True}, "is a bool"),
        ({"call": "x", "metrics": [0, "a", "b"]}, "two keywords"),
        ({"call": "x", "metrics": 0, "prefixx": "p"}, "unknown field(s) prefixx"),
        ("log", "not a table"),
        ({"call": "x", "metrics": 0, "through": 0}, "exactly one of metrics"),
        ({"call": "x", "returns": False}, "must be true"),
        ({"call": "x", "returns": "not a key"}, "must be true"),
        ({"call": "x", "metrics": 0, "key-prefix": 3}, "not a string"),
        ({"call": "x", "metrics": 0, "dict-only": "yes"}, "not true or false"),
        ({"call": "x", "key": 0, "dict-only": True}, "dict-only applies to a metrics"),
        ({"field": "info x"}, "not a dotted name"),
        ({"field": "info", "metrics": 0}, "takes only key-prefix"),
    ],
)
def test_scan_calls_entries_are_checked(entry: object, problem: str, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=problem.replace("(", r"\(").replace(")", r"\)")):
        parse_scan_call(entry)
    with pytest.raises(ConfigError, match=r"scan-calls: entry 1:"):
        parse_table({"scan-calls": [entry]}, tmp_path / "pyproject.toml")


@pytest.mark.parametrize(
    ("entry", "field", "value"),
    [
        ({"call": "log_train", "metrics": 1, "key-prefix": "train/"}, "key_prefix", "train/"),
        ({"call": "monitors.log", "metrics": 0, "dict-only": True}, "dict_only", True),
        ({"call": "gather", "through": [0, "data"]}, "through", Argument(0, "data")),
        ({"call": "A.step", "returns": True}, "returns", True),
        ({"call": "A.step", "returns": "metrics"}, "returns_key", "metrics"),
        ({"field": "meta_info.metrics"}, "field", "meta_info.metrics"),
    ],
)
def test_scan_calls_entries_read_the_new_fields(entry: object, field: str, value: object) -> None:
    assert getattr(parse_scan_call(entry), field) == value


def test_scan_calls_configured_replace_the_default_of_the_same_name() -> None:
    mine = parse_scan_call({"call": "wandb.log", "metrics": "row"})
    merged = merge_calls([mine])
    assert len(merged) == len(DEFAULT_SCAN_CALLS)
    assert mine in merged


# --- an invariant -----------------------------------------------------------------------

_KEY = st.from_regex(r"[a-z][a-z0-9_]{0,8}(/[a-z][a-z0-9_]{0,8})?", fullmatch=True)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    declared=st.sets(_KEY, max_size=6),
    logged=st.sets(_KEY, max_size=6),
    style=st.sampled_from(["literal", "assign", "update"]),
)
def test_scan_reports_exactly_the_logged_keys_no_row_declares(
    tmp_path_factory: pytest.TempPathFactory, declared: set[str], logged: set[str], style: str
) -> None:
    folder = tmp_path_factory.mktemp("inv")
    rows = "".join(
        f'  - logger_key: "{key}"\n    name: rl.k{index}\n    kind: gauge\n    unit: "1"\n'
        f"    description: Key number {index} of the generated catalog.\n"
        for index, key in enumerate(sorted(declared))
    )
    text = f"owner: a\nmodule: a\ndescription: Generated.\nprefix: train\nteed:\n{rows}"
    if not declared:
        text = text.replace("teed:\n", "teed: []\n")
    (folder / "a.yaml").write_text(text, encoding="utf-8")
    result = load_and_check([folder / "a.yaml"], root=folder, lint=False)
    assert result.ok, result.diagnostics
    keys = sorted(logged)
    if style == "literal":
        body = "m = {" + ", ".join(f"{k!r}: 1" for k in keys) + "}\n"
    elif style == "assign":
        body = "m = {}\n" + "".join(f"m[{k!r}] = 1\n" for k in keys)
    else:
        body = "m = dict()\n" + "".join(f"m.update({{{k!r}: 1}})\n" for k in keys)
    src = folder / "src"
    src.mkdir()
    (src / "a.py").write_text(
        "def f(logger):\n"
        + textwrap.indent(body + "logger.log_metrics(m, 1, prefix='train')\n", "    "),
        encoding="utf-8",
    )
    report = scan([src], result.catalog, cwd=folder, root=folder)
    undeclared = {m.split("'")[1] for m in _messages(report, "SCAN_UNDECLARED")}
    unlogged = {m.split("'")[1].removeprefix("train/") for m in _messages(report, "SCAN_UNLOGGED")}
    # A rename is one finding: the undeclared key names the row ("did you mean"), which is
    # then not reported unlogged as well.
    renamed = {
        m.split("did you mean '")[1].split("'")[0].removeprefix("train/")
        for m in _messages(report, "SCAN_UNDECLARED")
        if "did you mean '" in m
    }
    assert undeclared == logged - declared
    assert unlogged | renamed == declared - logged
    assert not unlogged & renamed
    assert not _messages(report, "SCAN_UNRESOLVED")
