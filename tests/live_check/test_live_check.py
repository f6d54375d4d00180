"""live-check: a run's JSONL log against the catalog's teed rows, streamed in bounded memory."""

from __future__ import annotations

import io
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from codegen import live_check
from codegen.catalog.model import Catalog
from codegen.catalog.pipeline import load_and_check
from codegen.cli import main
from codegen.live_check import FINDING_KINDS, LiveCheckReport, check_file, check_stream

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures" / "evolution"
RUN = FIXTURES / "run.jsonl"
# Kinds the evolution fixture (no key family, loop or attribute) cannot show: covered in
# test_presence.py, test_live_check_loop.py and test_live_check_attributes.py.
NOT_IN_FIXTURE = (
    "attribute_value",
    "attribute_budget",
    "unknown_loop",
    "loop_conflict",
    "undeclared_series",
    "undeclared_attribute",
    "missing_attribute",
    # Live telemetry only (a log's records carry no wire description): test_live_check_live.py
    "kind_mismatch",
    "unit_mismatch",
    "prometheus_name",
    "overflow",
    "missing_identity",
    # Rows of several loops sharing a key: test_live_check_loop_scopes.py
    "ambiguous_key",
    # Readings of a rewritten key routing apart: test_live_check_rewrite_readings.py
    "ambiguous_rewrite",
    # Only with --baseline-values: test_live_check_baseline_values.py
    "new_open_value",
    # The fixture declares no range: test_live_check_values.py
    "out_of_range",
    "not_integer",
    "unit_suspect",
)


def check_lines(catalog: Catalog, *lines: str | bytes) -> LiveCheckReport:
    """Check an in-memory log made of ``lines``."""
    raw = b"".join((x if isinstance(x, bytes) else x.encode()) + b"\n" for x in lines)
    return check_stream(io.BytesIO(raw), catalog, source="mem.jsonl")


def record(step: int, prefix: str = "train", **metrics: object) -> str:
    """One JsonlLogger line."""
    return json.dumps({"step": step, "prefix": prefix, "metrics": metrics})


def findings(report: LiveCheckReport) -> list[tuple[str, str, int, int]]:
    """(kind, prefix/key, count, first line) of every finding, sorted."""
    return sorted((f.kind, f.qualified_key, f.count, f.line) for f in report.findings)


def test_fixture_log_reports_every_finding_kind_at_its_first_line(
    evolution_catalog_all_required: Catalog,
) -> None:
    report = check_file(str(RUN), evolution_catalog_all_required)
    assert (report.lines, report.records) == (11, 6)
    assert findings(report) == [
        ("counter_decrease", "train/global_valid_toks", 1, 3),
        ("malformed", "#10", 1, 10),
        ("malformed", "#5", 1, 5),
        ("malformed", "#6", 1, 6),
        ("malformed", "#7", 1, 7),
        ("missing", "validation/val_loss", 1, 0),
        ("non_finite", "train/loss", 1, 3),
        ("non_finite", "train/reward", 2, 3),
        ("non_scalar", "train/kl_penalty", 1, 3),
        ("non_scalar", "train/kl_reference", 1, 3),
        ("non_scalar", "train/num_unmasked_tokens", 1, 3),
        ("undeclared", "train/grad_norm", 1, 1),
        ("undeclared", "validation/accuracy", 1, 11),
    ]
    assert report.kinds() == set(FINDING_KINDS) - set(NOT_IN_FIXTURE)


def test_summary_counts_logged_values_non_finite_and_last_value(
    evolution_catalog_all_required: Catalog,
) -> None:
    report = check_file(str(RUN), evolution_catalog_all_required)
    rows = {r["series"]: r for r in json.loads(report.to_json())["rows"]}
    assert rows["rl.reward.mean"] == {
        "presence": "logged",
        "requirement_level": "required",
        "emitted_by": [],
        "series": "rl.reward.mean",
        "logger_key": "train/reward",
        "kind": "gauge",
        "logged": 4,
        "non_finite": 2,
        "non_scalar": 0,
        "null": 0,
        "negative": 0,
        "last_value": "-Infinity",
        "last_step": 4,
    }
    assert rows["rl.train.valid_tokens"]["last_value"] == 7.0
    assert rows["rl.sft.validation.loss"]["logged"] == 0
    assert rows["rl.kl.divergence"]["non_scalar"] == 1
    # Recorded rows have no logger key, so live-check has nothing to say about them.
    assert "rl.vllm.batch.duration" not in rows


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        pytest.param('{"step": 1, "prefix": "train", "metrics": {', "invalid JSON", id="truncated"),
        pytest.param(b"\xff\xfe{}", "invalid JSON", id="not-utf8"),
        pytest.param("[1, 2]", "expected an object, got a JSON list", id="array"),
        pytest.param('"text"', "expected an object, got a JSON str", id="string"),
        pytest.param(
            '{"prefix": "train", "metrics": {}}', '"step" must be an integer', id="no-step"
        ),
        pytest.param(
            '{"step": 1.5, "prefix": "", "metrics": {}}', '"step" must be an integer', id="float"
        ),
        pytest.param(
            '{"step": false, "prefix": "", "metrics": {}}', '"step" must be an integer', id="bool"
        ),
        pytest.param('{"step": 1, "metrics": {}}', '"prefix" must be a string', id="no-prefix"),
        pytest.param(
            '{"step": 1, "prefix": "", "metrics": [1]}', '"metrics" must be an object', id="list"
        ),
        pytest.param("[" * 100_000, "invalid JSON", id="deep-nesting"),
    ],
)
def test_malformed_lines_are_diagnosed_with_their_line_number(
    evolution_catalog_all_required: Catalog, line: str | bytes, reason: str
) -> None:
    report = check_lines(
        evolution_catalog_all_required, record(1, reward=1.0), line, record(2, reward=2.0)
    )
    (bad,) = [f for f in report.findings if f.kind == "malformed"]
    assert bad.line == 2
    assert reason in bad.message()
    diagnostic = next(d for d in report.diagnostics(["malformed"]) if d.code == "MALFORMED")
    assert diagnostic.format().startswith("mem.jsonl:2:1: error[MALFORMED]: line 2 is not")
    # The lines around it still count.
    assert report.records == 2


def test_overlong_line_is_skipped_without_holding_it(
    evolution_catalog_all_required: Catalog, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(live_check, "MAX_LINE_BYTES", 64)
    long_line = record(1, reward=1.0, padding="x" * 500)
    report = check_lines(evolution_catalog_all_required, long_line, record(2, reward=2.0))
    (bad,) = [f for f in report.findings if f.kind == "malformed"]
    assert bad.line == 1
    assert "longer than 64 bytes" in bad.message()
    assert report.records == 1
    assert report.lines == 2


@pytest.mark.parametrize(
    ("metrics", "kind"),
    [
        pytest.param({"reward": True}, "non_scalar", id="bool"),
        pytest.param({"reward": None}, None, id="null-is-no-value"),
        pytest.param({"reward": "0.5"}, "non_scalar", id="string"),
        pytest.param({"reward": [0.5]}, "non_scalar", id="list"),
        pytest.param({"reward": {"a": 1}}, "non_scalar", id="object"),
        pytest.param({"reward": {"__type__": "Tensor"}}, "non_scalar", id="unconvertible"),
        pytest.param({"reward": 10**400}, "non_scalar", id="huge-int"),
        pytest.param({"reward": float("nan")}, "non_finite", id="nan"),
        pytest.param({"reward": float("inf")}, "non_finite", id="inf"),
        pytest.param({"global_valid_toks": -1}, "counter_decrease", id="negative-counter"),
        pytest.param({"global_valid_toks": float("-inf")}, "non_finite", id="counter-neg-inf"),
        pytest.param({"memory": -1}, None, id="negative-up-down-counter"),
        pytest.param({"loss": -1}, None, id="negative-gauge"),
        pytest.param({"reward": 0}, None, id="int"),
    ],
)
def test_each_value_shape_maps_to_its_finding_kind(
    evolution_catalog_all_required: Catalog, metrics: dict[str, object], kind: str | None
) -> None:
    report = check_lines(
        evolution_catalog_all_required,
        json.dumps({"step": 1, "prefix": "train", "metrics": metrics}),
    )
    kinds = {f.kind for f in report.findings} - {"missing"}
    assert kinds == ({kind} if kind else set())


def test_a_null_value_is_no_value_this_step_counted_but_not_a_finding(
    evolution_catalog_all_required: Catalog,
) -> None:
    report = check_lines(
        evolution_catalog_all_required,
        record(1, reward=None, global_valid_toks=None),
        record(2, reward=0.5, global_valid_toks=None),
    )
    assert report.kinds() <= {"missing"}
    rows = {s.row.logger_key: s for s in report.rows}
    assert (rows["reward"].logged, rows["reward"].null, rows["reward"].last_value) == (2, 1, 0.5)
    # a key logged only as null was logged (presence holds) though it never had a value
    assert rows["global_valid_toks"].presence == "logged"
    assert rows["global_valid_toks"].to_json()["null"] == 2
    assert rows["global_valid_toks"].non_scalar == 0


def test_a_counter_delta_smaller_than_the_last_is_not_a_decrease(
    evolution_catalog_all_required: Catalog,
) -> None:
    report = check_lines(
        evolution_catalog_all_required,
        record(1, global_valid_toks=100),
        record(2, global_valid_toks=3),
        record(3, global_valid_toks=0),
    )
    assert "counter_decrease" not in report.kinds()


def test_undeclared_key_under_another_prefix_names_the_declared_prefix(
    evolution_catalog_all_required: Catalog,
) -> None:
    report = check_lines(evolution_catalog_all_required, record(1, "validation", reward=1.0))
    (finding,) = [f for f in report.findings if f.kind == "undeclared"]
    assert "(a row declares it under prefix 'train')" in finding.message()


def test_undeclared_tracking_is_capped_and_the_rest_counted(
    evolution_catalog_all_required: Catalog, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(live_check, "MAX_UNDECLARED_KEYS", 5)
    lines = (
        json.dumps({"step": i, "prefix": "train", "metrics": {f"k{i}": 1.0}}) for i in range(8)
    )
    report = check_lines(evolution_catalog_all_required, *lines)
    assert len([f for f in report.findings if f.kind == "undeclared"]) == 5
    assert report.undeclared_untracked == 3
    notes = [d.message for d in report.diagnostics() if "counted, not listed" in d.message]
    assert notes == [
        "3 more undeclared value(s) under keys beyond the first 5 distinct ones were "
        "counted, not listed"
    ]
    doc = json.loads(report.to_json())
    assert doc["counts"]["undeclared"] == 8
    assert doc["notes"] == notes


def test_malformed_reporting_is_capped_and_the_rest_counted(
    evolution_catalog_all_required: Catalog, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(live_check, "MAX_MALFORMED_REPORTED", 2)
    report = check_lines(evolution_catalog_all_required, *(["nope"] * 5))
    assert len([f for f in report.findings if f.kind == "malformed"]) == 2
    assert report.malformed_unreported == 3
    assert report.failed(["malformed"]) == ["malformed"]


def test_json_findings_carry_count_first_occurrence_severity_and_source(
    evolution_catalog_all_required: Catalog,
) -> None:
    doc = json.loads(check_file(str(RUN), evolution_catalog_all_required).to_json(["non_finite"]))
    by_key = {(f["kind"], f["key"]): f for f in doc["findings"]}
    assert by_key[("non_finite", "reward")] == {
        "kind": "non_finite",
        "prefix": "train",
        "key": "reward",
        "series": "rl.reward.mean",
        "count": 2,
        "first_line": 3,
        "first_step": 2,
        "attribute": None,
        "severity": "error",
        "source": f"{RUN}:3:1",
        "message": "train/reward (rl.reward.mean) was logged 2 time(s) as NaN or infinity, "
        "first NaN at step 2",
        # Added with the CI reports: where the last occurrence was.
        "last_line": 9,
        "last_source": f"{RUN}:9:1",
        # Added with renamed keys: the row key an undeclared key renames.
        "did_you_mean": None,
    }
    assert by_key[("missing", "val_loss")]["source"] == "catalog/sft.yaml:10:5"
    malformed = [f for f in doc["findings"] if f["kind"] == "malformed"]
    assert [(f["first_line"], f["key"]) for f in malformed] == [
        (5, None),
        (6, None),
        (7, None),
        (10, None),
    ]
    assert (doc["failed"], doc["ok"], doc["notes"]) == (["non_finite"], False, [])


def test_text_report_has_a_table_per_teed_row_and_the_verdict(
    evolution_catalog_all_required: Catalog,
) -> None:
    report = check_file(str(RUN), evolution_catalog_all_required)
    text = report.to_text(["non_finite"])
    lines = text.splitlines()
    assert lines[0] == f"live-check {RUN}: 11 line(s), 6 record(s), 9 teed row(s) declared"
    assert lines[1] == "loop: unknown (no declared loop's signature keys were logged)"
    assert lines[2].startswith("summary: ")  # summary first (issue 22), then the table
    assert lines[3].split() == [
        "series",
        "logged",
        "as",
        "kind",
        "logged",
        "non-finite",
        "last",
        "value",
    ]
    assert any(
        line.split() == ["rl.reward.mean", "train/reward", "gauge", "4", "2", "-inf"]
        for line in lines
    )
    assert f"{RUN}:3:1: error[NON_FINITE]: train/reward (rl.reward.mean)" in text
    assert "catalog/sft.yaml:10:5: warning[MISSING]: validation/val_loss" in text
    assert lines[-1] == "FAILED: --fail-on non_finite"


def test_log_written_by_the_jsonl_logger_checks_clean(
    evolution_catalog_all_required: Catalog, tmp_path: Path
) -> None:
    from metric_catalog.loggers import JsonlLogger

    path = tmp_path / "run.jsonl"
    with JsonlLogger(path) as logger:
        for step in range(3):
            logger.log_metrics(
                {
                    "reward": 0.5,
                    "loss": 1.0 / (step + 1),
                    "global_valid_toks": 10 * step,
                    "kl_penalty": 0.1,
                    "kl_reference": 0.1,
                    "num_unmasked_tokens": 4,
                    "memory": 2048 - step,
                },
                step,
                prefix="train",
            )
            logger.log_metrics({"total_step_time": 1.25}, step, prefix="timing/train")
            logger.log_metrics({"val_loss": 0.5}, step, prefix="validation")
    report = check_file(str(path), evolution_catalog_all_required)
    assert report.findings == []
    assert all(r.logged == 3 for r in report.rows)


@pytest.mark.parametrize(
    ("args", "code"),
    [
        pytest.param([], 0, id="report-only"),
        *(
            pytest.param(["--fail-on", kind], 1, id=kind)
            for kind in FINDING_KINDS
            if kind not in NOT_IN_FIXTURE
        ),
        pytest.param(["--fail-on", "all"], 1, id="all"),
        pytest.param(["--fail-on", "missing", "--catalog", "catalog/grpo.yaml"], 0, id="subset"),
        pytest.param(["--fail-on", "bogus"], 2, id="unknown-kind"),
    ],
)
def test_exit_code_is_1_only_when_a_fail_on_kind_occurred(
    args: list[str], code: int, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # The fixture's rows are recommended; make the validation row required so it can be missing.
    root = tmp_path / "root"
    shutil.copytree(FIXTURES / "catalog", root / "catalog")
    sft = root / "catalog" / "sft.yaml"
    sft.write_text(
        sft.read_text().replace(
            "    description: Token-weighted validation loss.\n",
            "    description: Token-weighted validation loss.\n    requirement_level: required\n",
        )
    )
    assert main(["live-check", str(RUN), "--root", str(root), *args]) == code
    out = capsys.readouterr().out
    if code != 2:
        assert out.startswith(f"live-check {RUN}")


def test_clean_log_passes_fail_on_all(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = tmp_path / "ok.jsonl"
    log.write_text(
        record(1, reward=1.0, loss=0.5, global_valid_toks=3, kl_penalty=0.0, kl_reference=0.0)
        + "\n"
        + record(1, "timing/train", total_step_time=1.0)
        + "\n"
    )
    args = ["live-check", str(log), "--catalog", str(FIXTURES / "catalog" / "grpo.yaml")]
    assert main([*args, "--fail-on", "all", "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["ok"] is True
    assert doc["failed"] == []


def test_dash_reads_the_log_from_stdin() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "codegen", "live-check", "-", "--root", str(FIXTURES)],
        input=RUN.read_bytes(),
        capture_output=True,
        cwd=REPO,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout.decode()
    assert out.startswith("live-check <stdin>: 11 line(s), 6 record(s)")
    assert "<stdin>:3:1: warning[NON_FINITE]" in out


def test_unreadable_log_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["live-check", "/nonexistent/run.jsonl", "--root", str(FIXTURES)]) == 2
    assert "cannot read /nonexistent/run.jsonl" in capsys.readouterr().err


@settings(max_examples=200, deadline=None)
@given(st.lists(st.binary(max_size=80) | st.text(max_size=80).map(str.encode), max_size=12))
def test_arbitrary_bytes_never_raise_and_every_line_is_accounted_for(
    evolution_catalog: Catalog, lines: list[bytes]
) -> None:
    raw = b"\n".join(lines)
    report = check_stream(io.BytesIO(raw), evolution_catalog)
    malformed = report._count("malformed")
    assert report.records + malformed <= report.lines
    assert report.lines == raw.count(b"\n") + (0 if raw.endswith(b"\n") or not raw else 1)


# Imports and a first catalog load peak higher than a streaming check needs, which
# would hide growth; so the probe warms up, then resets the kernel's high-water
# mark (Linux clear_refs) when it can, and reports the peak of the check itself.
_RSS_PROBE = """
import re, resource, sys
from pathlib import Path
from codegen.cli import main
from codegen.catalog.pipeline import load_and_check
load_and_check(root=Path(sys.argv[-1]).resolve(), lint=False)
try:
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")
    reset = True
except OSError:
    reset = False
code = main(sys.argv[1:])
if reset:
    with open("/proc/self/status") as f:
        peak = int(re.search(r"VmHWM:\\s+(\\d+)", f.read()).group(1))
else:
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(peak, file=sys.stderr)
sys.exit(code)
"""


def _write_log(path: Path, target_bytes: int) -> None:
    """A synthetic run log: declared keys, bad values, and ever-new undeclared keys."""
    lines = []
    for i in range(1000):
        metrics = {
            "reward": 0.5,
            "loss": float("nan") if i % 97 == 0 else 0.25,
            "global_valid_toks": -1 if i % 101 == 0 else 4096,
            "kl_penalty": "oops" if i % 89 == 0 else 0.01,
            "kl_reference": 0.01,
            "memory": 123456789,
            "num_unmasked_tokens": 2048,
            "undeclared_@_" + str(i): 1.0,
            "note": "x" * 600,
        }
        lines.append(json.dumps({"step": i, "prefix": "train", "metrics": metrics}))
    chunk = ("\n".join(lines) + "\n").encode()
    written, n = 0, 0
    with path.open("wb") as out:
        while written < target_bytes:
            # Every chunk renames its undeclared keys, so distinct keys grow with the file.
            data = chunk.replace(b"_@_", f"_{n}_".encode())
            out.write(data)
            written += len(data)
            n += 1


def _peak_rss_kib(log: Path) -> int:
    proc = subprocess.run(
        [sys.executable, "-c", _RSS_PROBE, "live-check", str(log), "--root", str(FIXTURES)],
        capture_output=True,
        text=True,
        cwd=REPO,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    return int(proc.stderr.strip().splitlines()[-1])


@pytest.mark.integration
def test_a_200_mb_log_is_checked_in_bounded_memory(tmp_path: Path) -> None:
    small, big = tmp_path / "small.jsonl", tmp_path / "big.jsonl"
    _write_log(small, 1 << 20)
    _write_log(big, 200 << 20)
    assert big.stat().st_size >= 200 << 20
    baseline = _peak_rss_kib(small)
    peak = _peak_rss_kib(big)
    # Memory is the invariant; how fast live-check reads is a benchmark's business.
    growth_mib = (peak - baseline) / 1024
    assert growth_mib < 50, f"peak RSS grew {growth_mib:.1f} MiB ({baseline} -> {peak} KiB)"


def test_rows_of_an_owner_that_logged_nothing_are_inactive_not_missing(
    evolution_catalog_all_required: Catalog,
) -> None:
    """An owner never imported declares nothing: its rows are listed as inactive, not missing."""
    raw = (record(1, reward=0.5) + "\n").encode()
    report = check_stream(io.BytesIO(raw), evolution_catalog_all_required, source="grpo-only.jsonl")
    missing_owners = {f.qualified_key for f in report.findings if f.kind == "missing"}
    assert "validation/val_loss" not in missing_owners  # sft logged nothing
    assert "train/loss" in missing_owners  # grpo logged reward, so its other rows count
    assert report.inactive_owners == {"catalog/sft.yaml": 3}
    assert "inactive owners" in report.to_text()
    assert json.loads(report.to_json())["inactive_owners"] == {"catalog/sft.yaml": 3}


def test_all_owners_reports_rows_of_silent_owners_as_missing(
    evolution_catalog_all_required: Catalog,
) -> None:
    """--all-owners restores the strict reading: every unlogged teed row is missing."""
    raw = (record(1, reward=0.5) + "\n").encode()
    report = check_stream(io.BytesIO(raw), evolution_catalog_all_required, all_owners=True)
    missing = {f.qualified_key for f in report.findings if f.kind == "missing"}
    assert "validation/val_loss" in missing
    assert report.inactive_owners == {}


def test_key_shared_by_a_deprecated_row_and_its_replacement_feeds_both(tmp_path: Path) -> None:
    """A rename that keeps the logger key: one logged value counts for both series."""
    (tmp_path / "catalog").mkdir()
    (tmp_path / "catalog" / "grpo.yaml").write_text(
        "owner: nemo_rl.grpo\nmodule: grpo\ndescription: GRPO metrics.\nteed:\n"
        "  - logger_key: kl\n    name: rl.kl.divergence\n    kind: gauge\n"
        '    unit: "1"\n    description: KL to the reference policy.\n'
        '    deprecated: {since: "0.2.0", replaced_by: rl.kl.reference}\n'
        "  - logger_key: kl\n    name: rl.kl.reference\n    kind: gauge\n"
        '    unit: "1"\n    description: KL to the reference policy.\n',
        encoding="utf-8",
    )
    loaded = load_and_check(root=tmp_path, lint=False)
    assert loaded.ok, loaded.diagnostics
    report = check_lines(loaded.catalog, record(1, kl=0.5), record(2, kl=float("nan")))
    logged = {s.row.name: (s.logged, s.non_finite, s.last_step) for s in report.rows}
    assert logged == {"rl.kl.divergence": (2, 1, 2), "rl.kl.reference": (2, 1, 2)}
    assert findings(report) == [("non_finite", "train/kl", 1, 2)]
