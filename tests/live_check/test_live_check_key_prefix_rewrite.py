"""Key prefix rewrites: a logging callback that prefixes every key (transformers'
``rewrite_logs``: ``loss`` as ``train/loss``, ``eval_loss`` as ``eval/loss``) is read back
as the code logged it, rewriting only a key's start.

``--key-rewrite train/=`` replaces the text anywhere, so a reward function named
``pretrain`` (``rewards/pretrain/mean``) lost its own ``train/`` too;
``--key-prefix-rewrite`` (and ``key-prefix-rewrite`` in ``[tool.metric-catalog]``) rewrites
the first rule whose ``FROM`` a key starts with, once; the table ``transformers`` is
``rewrite_logs`` undone.
"""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from codegen.catalog.model import Catalog
from codegen.cli import main
from codegen.config import ConfigError, load_config
from codegen.live_check import LiveCheckReport, check_stream
from codegen.runs.rewrites import (
    PREFIX_TABLES,
    parse_prefix_rewrites,
    rewrite_prefix,
)
from tests.catalog_projects import loaded_catalog, write_catalog

CATALOG = """\
owner: trainer
module: trainer
description: Keys a Hugging Face Trainer logs, with reward functions named after a backend prefix.
prefix: ""
attributes:
  - name: hf.reward_func
    type: string
    description: The reward function's name.
    max_cardinality: "16"
teed:
  - logger_key: loss
    name: rl.hf.loss
    kind: gauge
    unit: "1"
    description: Training loss.
  - logger_key: eval_loss
    name: rl.hf.eval_loss
    kind: gauge
    unit: "1"
    description: Evaluation loss.
  - logger_key: "rewards/{hf.reward_func}/mean"
    name: rl.hf.reward_mean
    kind: gauge
    unit: "1"
    description: Mean reward of one reward function.
    attributes:
      - ref: hf.reward_func
"""

# As WandbCallback / TensorBoardCallback store them (rewrite_logs), one record per call.
RUN = (
    b'{"step": 1, "data": {"train/loss": 0.5, "train/rewards/pretrain/mean": 0.25,'
    b' "train/rewards/llm_eval/mean": 0.75}}\n'
    b'{"step": 2, "data": {"eval/loss": 0.4, "eval/rewards/pretrain/mean": 0.3}}\n'
)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    write_catalog(tmp_path, CATALOG, "trainer.yaml")
    (tmp_path / "run.jsonl").write_bytes(RUN)
    return tmp_path


@pytest.fixture
def prefixed_trainer_catalog(project: Path) -> Catalog:
    """The Trainer's rows of :data:`CATALOG`, as the project declares them."""
    return loaded_catalog(project)


def check(catalog: Catalog, **kwargs: tuple[tuple[str, str], ...]) -> LiveCheckReport:
    return check_stream(io.BytesIO(RUN), catalog, input_format="flat-jsonl", **kwargs)


def findings(report: LiveCheckReport) -> set[tuple[str, str]]:
    return {(f.kind, f.qualified_key) for f in report.findings}


TRANSFORMERS = PREFIX_TABLES["transformers"]


@pytest.mark.parametrize(
    ("stored", "logged"),
    [
        ("train/loss", "loss"),
        ("eval/loss", "eval_loss"),
        ("test/loss", "test_loss"),
        ("train/rewards/pretrain/mean", "rewards/pretrain/mean"),
        ("train/rewards/llm_eval/mean", "rewards/llm_eval/mean"),
        ("eval/rewards/pretrain/mean", "eval_rewards/pretrain/mean"),
        ("train/train/loss", "train/loss"),  # the code logged 'train/loss' itself
        ("train/eval/loss", "eval/loss"),
        ("loss", "loss"),  # no rule fits: as read
    ],
)
def test_the_transformers_table_rewrites_a_keys_start_once(stored: str, logged: str) -> None:
    assert rewrite_prefix(stored, TRANSFORMERS) == logged


@given(st.text(max_size=40))
def test_the_transformers_table_undoes_rewrite_logs_for_any_key(key: str) -> None:
    """The invariant: whatever the code logged, the table reads back exactly that key."""
    integrations = pytest.importorskip("transformers.integrations.integration_utils")
    (stored,) = integrations.rewrite_logs({key: 1.0})
    assert rewrite_prefix(stored, TRANSFORMERS) == key


def test_a_substring_rewrite_mangles_reward_names_a_prefix_rewrite_keeps(
    prefixed_trainer_catalog: Catalog,
) -> None:
    substring = check(prefixed_trainer_catalog, key_rewrites=(("train/", ""), ("eval/", "eval_")))
    # 'rewards/pretrain/mean' lost its own 'train/', 'llm_eval/' became 'llm_eval_'.
    assert findings(substring) == {
        ("undeclared", "rewards/premean"),
        ("undeclared", "rewards/llm_eval_mean"),
        ("undeclared", "eval_rewards/premean"),
    }
    prefixed = check(prefixed_trainer_catalog, key_prefix_rewrites=TRANSFORMERS)
    assert findings(prefixed) == {("undeclared", "eval_rewards/pretrain/mean")}
    logged = {r.row.name: r.logged for r in prefixed.rows if r.logged}
    assert logged == {"rl.hf.loss": 1, "rl.hf.eval_loss": 1, "rl.hf.reward_mean": 2}


def test_a_rewritten_key_the_record_already_holds_keeps_its_spelling(
    prefixed_trainer_catalog: Catalog,
) -> None:
    raw = b'{"step": 1, "data": {"train/loss": 0.5, "loss": 0.6}}\n'
    report = check_stream(
        io.BytesIO(raw),
        prefixed_trainer_catalog,
        input_format="flat-jsonl",
        key_prefix_rewrites=TRANSFORMERS,
    )
    assert findings(report) == {("undeclared", "train/loss")}  # nothing silently dropped
    assert {r.row.name: r.logged for r in report.rows if r.logged} == {"rl.hf.loss": 1}


@pytest.mark.parametrize(
    ("rules", "pairs"),
    [
        (["transformers"], TRANSFORMERS),
        (["train/="], (("train/", ""),)),
        (["a=b=c"], (("a", "b=c"),)),  # split at the first '='
        (["x/=y/", "transformers"], (("x/", "y/"), *TRANSFORMERS)),
        ([], ()),
    ],
)
def test_rules_and_tables_expand_in_order(rules: list[str], pairs: tuple[tuple[str, str]]) -> None:
    assert parse_prefix_rewrites(rules) == pairs


@pytest.mark.parametrize("rule", ["=x", "no-equals", "", "Transformers"])
def test_a_bad_flag_rule_exits_2_naming_the_tables(
    project: Path, capsys: pytest.CaptureFixture[str], rule: str
) -> None:
    run = str(project / "run.jsonl")
    assert main(["live-check", run, "--root", str(project), "--key-prefix-rewrite", rule]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: --key-prefix-rewrite: ")
    assert "is neither FROM=TO" in err
    assert "transformers" in err


def test_the_flag_checks_the_run_clean_and_reports_its_rules(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = str(project / "run.jsonl")
    args = ["live-check", run, "--root", str(project), "--input-format", "flat-jsonl"]
    args += ["--format", "json", "--key-prefix-rewrite", "transformers"]
    main(args)
    report = json.loads(capsys.readouterr().out)
    assert report["key_prefix_rewrites"] == [{"from": a, "to": b} for a, b in TRANSFORMERS]
    kinds = {(f["kind"], f["key"]) for f in report["findings"]}
    assert kinds == {("undeclared", "eval_rewards/pretrain/mean")}


def test_the_table_key_applies_before_the_flags(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "pyproject.toml").write_text(
        '[tool.metric-catalog]\nkey-prefix-rewrite = ["transformers"]\n', encoding="utf-8"
    )
    assert load_config(project).key_prefix_rewrites == TRANSFORMERS
    run = str(project / "run.jsonl")
    main(["live-check", run, "--root", str(project), "--input-format", "flat-jsonl"])
    out = capsys.readouterr().out
    assert "key prefix rewrites (at a key's start): 'eval/' -> 'eval_'" in out


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ('["=x"]', r"entry 1: '=x' is neither FROM=TO"),
        ('["no-such-table"]', r"entry 1: 'no-such-table' is neither FROM=TO"),
        ("7", r"7 is not a list of strings"),
    ],
)
def test_a_bad_table_rule_names_the_file_the_line_and_the_fix(
    tmp_path: Path, value: str, problem: str
) -> None:
    (tmp_path / "pyproject.toml").write_text(
        f'[tool.metric-catalog]\ncatalog = ["c/*.yaml"]\nkey-prefix-rewrite = {value}\n'
    )
    with pytest.raises(ConfigError) as caught:
        load_config(tmp_path)
    message = str(caught.value)
    assert ":3: [tool.metric-catalog] key-prefix-rewrite: " in message
    assert re.search(problem, message), message
    assert '["transformers"]' in message


def test_a_prefix_rewrite_with_live_telemetry_is_refused(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["live-check", "--scrape", "http://127.0.0.1:9/metrics", "--root", str(project)]
    assert main([*args, "--key-prefix-rewrite", "transformers"]) == 2
    assert "--key-prefix-rewrite applies to logged keys" in capsys.readouterr().err


def test_without_the_table_a_prefixed_key_a_row_would_take_names_the_flag(
    prefixed_trainer_catalog: Catalog,
) -> None:
    report = check(prefixed_trainer_catalog)
    hinted = {f.key: f.message(report.hints) for f in report.findings}
    assert "--key-prefix-rewrite transformers reads it as 'loss'" in hinted["train/loss"]
    assert "Trainer's W&B and TensorBoard callbacks" in hinted["train/loss"]
    # No row would take eval_rewards/pretrain/mean either: no hint to follow.
    assert "--key-prefix-rewrite" not in hinted["eval/rewards/pretrain/mean"]
