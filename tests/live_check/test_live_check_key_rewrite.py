"""Key rewrites: a backend that mangles keys (verl's MLflow adapter logs ``mean@4`` as
``mean_at_4``) is checked against the catalog's keys without editing a row.

``live-check --key-rewrite FROM=TO`` (repeatable) and the ``key-rewrite`` key of
``[tool.metric-catalog]`` replace literal text in every key read from the inputs, in order,
before matching; a key only its spelling as read matches keeps it. The report counts the
keys and values rewritten.
"""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest

from codegen.catalog.model import Catalog
from codegen.cli import main
from codegen.config import ConfigError, load_config
from codegen.live_check import LiveCheckReport, check_stream
from codegen.runs.rewrites import parse_rewrite, rewrite_key
from tests.catalog_projects import loaded_catalog, write_catalog

CATALOG = """\
owner: val
module: val
description: Validation keys with '@', and one that holds '_at_' itself.
prefix: ""
attributes:
  - name: val.n
    type: int
    description: Samples per prompt.
    max_cardinality: "8"
teed:
  - logger_key: "val-core/gsm8k/acc/mean@{val.n}"
    name: rl.val.mean
    kind: gauge
    unit: "1"
    description: Mean accuracy over n samples.
    no_lint: [LOGGER_KEY_BACKEND_UNSAFE]
    attributes:
      - ref: val.n
  - logger_key: "actor/entropy_at_end"
    name: rl.actor.entropy_at_end
    kind: gauge
    unit: "1"
    description: A key that holds the rewritten text itself.
"""

RUN = (
    b'{"step": 1, "data": {"val-core/gsm8k/acc/mean_at_4": 0.5, "actor/entropy_at_end": 1.0}}\n'
    b'{"step": 2, "data": {"val-core/gsm8k/acc/mean_at_4": 0.75, "actor/entropy_at_end": 1.0,'
    b' "made/up_at_x": 2.0}}\n'
)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    write_catalog(tmp_path, CATALOG, "val.yaml")
    (tmp_path / "run.jsonl").write_bytes(RUN)
    return tmp_path


@pytest.fixture
def at_sign_catalog(project: Path) -> Catalog:
    """The validation rows of :data:`CATALOG`, keys with '@' and one holding '_at_'."""
    return loaded_catalog(project)


def findings(report: LiveCheckReport) -> set[tuple[str, str]]:
    return {(f.kind, f.qualified_key) for f in report.findings}


def test_without_a_rewrite_the_mangled_keys_are_undeclared_with_the_rewrite_to_pass(
    at_sign_catalog: Catalog,
) -> None:
    report = check_stream(io.BytesIO(RUN), at_sign_catalog, input_format="flat-jsonl")
    assert findings(report) == {
        ("undeclared", "val-core/gsm8k/acc/mean_at_4"),
        ("undeclared", "made/up_at_x"),
    }
    assert report.rewritten_keys == 0
    hinted = {f.key: f.message(report.hints) for f in report.findings}
    assert (
        "(verl's MLflow adapter writes '@' as '_at_': --key-rewrite _at_=@ reads it as "
        "'val-core/gsm8k/acc/mean@4', which a row declares)"
    ) in hinted["val-core/gsm8k/acc/mean_at_4"]
    assert "--key-rewrite" not in hinted["made/up_at_x"]  # no row would take it either


def test_a_rewrite_matches_the_keys_the_catalog_declares(at_sign_catalog: Catalog) -> None:
    report = check_stream(
        io.BytesIO(RUN), at_sign_catalog, input_format="flat-jsonl", key_rewrites=(("_at_", "@"),)
    )
    assert findings(report) == {("undeclared", "made/up@x")}
    assert {r.row.name: r.logged for r in report.rows if r.logged} == {
        "rl.val.mean": 2,
        "rl.actor.entropy_at_end": 2,  # only its spelling as read is declared: kept
    }
    (made_up,) = report.findings
    assert "read as 'made/up_at_x'" in made_up.message(report.hints)
    assert (report.rewritten_keys, report.rewritten_values) == (2, 3)


@pytest.mark.parametrize(
    ("rules", "key", "expected"),
    [
        ((("_at_", "@"),), "a/mean_at_4/b_at_2", "a/mean@4/b@2"),
        ((("_at_", "@"), ("@", "-")), "mean_at_4", "mean-4"),  # in the order given
        ((("@", "-"), ("_at_", "@")), "mean_at_4", "mean@4"),
        ((("x", ""),), "axbx", "ab"),
        ((), "as is", "as is"),
    ],
)
def test_rewrites_replace_literal_text_in_order(
    rules: tuple[tuple[str, str], ...], key: str, expected: str
) -> None:
    assert rewrite_key(key, rules) == expected


def test_the_flag_rewrites_and_the_reports_say_so(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = str(project / "run.jsonl")
    args = ["live-check", run, "--root", str(project), "--fail-on", "undeclared"]
    assert main([*args, "--format", "json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["key_rewrites"] == {"rules": [], "keys": 0, "values": 0}
    assert doc["counts"]["undeclared"] == 3
    assert main([*args, "--format", "json", "--key-rewrite", "_at_=@"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["key_rewrites"] == {"rules": [{"from": "_at_", "to": "@"}], "keys": 2, "values": 3}
    assert doc["counts"]["undeclared"] == 1
    assert [entry["format"] for entry in doc["inputs"]] == ["flat-jsonl"]
    main([*args, "--key-rewrite", "_at_=@"])
    text = capsys.readouterr().out
    assert "key rewrites: '_at_' -> '@': 2 distinct key(s), 3 value(s) rewritten" in text


def test_the_table_key_applies_and_the_flag_adds_after_it(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "pyproject.toml").write_text('[tool.metric-catalog]\nkey-rewrite = ["_at_=@"]\n')
    run = str(project / "run.jsonl")
    args = ["live-check", run, "--root", str(project), "--format", "json"]
    main(args)
    doc = json.loads(capsys.readouterr().out)
    assert doc["counts"]["undeclared"] == 1
    main([*args, "--key-rewrite", "made/=", "--key-rewrite", "up@x=rl"])
    doc = json.loads(capsys.readouterr().out)
    assert [rule["from"] for rule in doc["key_rewrites"]["rules"]] == ["_at_", "made/", "up@x"]
    assert doc["counts"]["undeclared"] == 1  # made/up_at_x -> made/up@x -> up@x -> rl
    assert [f["key"] for f in doc["findings"] if f["kind"] == "undeclared"] == ["rl"]


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ('["=@"]', r"entry 1: '=@' is not FROM=TO"),
        ('["_at_@"]', r"entry 1: '_at_@' is not FROM=TO"),
        ('["_at_=@", ""]', r"'' is not a non-empty string"),
        ('["a\\u001b=b"]', r"control character '\\x1b'"),
        ("7", r"7 is not a list of strings"),
    ],
)
def test_a_bad_table_rewrite_names_the_file_the_line_and_the_fix(
    tmp_path: Path, value: str, problem: str
) -> None:
    (tmp_path / "pyproject.toml").write_text(
        f'[tool.metric-catalog]\ncatalog = ["c/*.yaml"]\nkey-rewrite = {value}\n'
    )
    with pytest.raises(ConfigError) as caught:
        load_config(tmp_path)
    message = str(caught.value)
    assert ":3: [tool.metric-catalog] key-rewrite: " in message
    assert re.search(problem, message), message
    assert 'expected a list of "FROM=TO" strings, e.g. ["_at_=@"]' in message


@pytest.mark.parametrize("rule", ["=x", "no-equals", ""])
def test_a_bad_flag_rewrite_exits_2_saying_how_to_write_one(
    project: Path, capsys: pytest.CaptureFixture[str], rule: str
) -> None:
    run = str(project / "run.jsonl")
    assert main(["live-check", run, "--root", str(project), "--key-rewrite", rule]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: --key-rewrite: ")
    assert "is not FROM=TO" in err


def test_a_rewrite_splits_at_the_first_equals_sign() -> None:
    assert parse_rewrite("a=b=c") == ("a", "b=c")
    assert parse_rewrite("_at_=") == ("_at_", "")


def test_a_key_rewrite_with_live_telemetry_is_refused(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["live-check", "--scrape", "http://127.0.0.1:9/metrics", "--root", str(project)]
    assert main([*args, "--key-rewrite", "_at_=@"]) == 2
    assert "--key-rewrite applies to logged keys" in capsys.readouterr().err


def test_a_rewrite_undoes_tensorboardx_spelling(at_sign_catalog: Catalog) -> None:
    """tensorboardX writes ``mean@4`` as ``mean_4``; ``mean_=mean@`` reads it back."""
    raw = b'{"step": 1, "data": {"val-core/gsm8k/acc/mean_4": 0.5, "actor/entropy_at_end": 1}}\n'
    report = check_stream(
        io.BytesIO(raw),
        at_sign_catalog,
        input_format="flat-jsonl",
        key_rewrites=(("mean_", "mean@"),),
    )
    assert report.findings == []
    assert {r.row.name for r in report.rows if r.logged} == {
        "rl.val.mean",
        "rl.actor.entropy_at_end",
    }
