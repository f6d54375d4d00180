"""``metric-catalog infer``: draft rows from logged runs, then validate and live-check them."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from codegen.catalog.model import Catalog
from codegen.catalog.pipeline import load_and_check
from codegen.cli import main
from codegen.infer import MAX_ENUM_VALUES, TODO, infer, render
from tests.upstream_runs import LOOPS, run_lines

REPO = Path(__file__).resolve().parents[2]
EMPTY = Catalog(())


def _write_run(
    path: Path, records: list[tuple[int, str, dict[str, object]]], loop: str | None
) -> str:
    lines = []
    for step, prefix, metrics in records:
        line: dict[str, object] = {"step": step, "prefix": prefix, "metrics": metrics}
        if loop is not None:
            line["loop"] = loop
        lines.append(json.dumps(line))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return str(path)


def _draft(
    tmp_path: Path, records: list[tuple[int, str, dict[str, object]]], loop: str | None = None
) -> str:
    run = _write_run(tmp_path / "run.jsonl", records, loop)
    draft = infer([[run]], EMPTY)
    return "\n---\n".join(render(f, draft.observations.runs) for f in draft.files)


def _verl_step(step: int) -> dict[str, object]:
    """One step of verl's PPO trainer as Tracking.log gets it: flat keys, no prefix."""
    stages = ("gen", "ref", "old_log_prob", "adv", "update_actor", "step")
    metrics: dict[str, object] = {
        "training/global_step": step,
        "training/epoch": 0,
        "actor/pg_loss": 0.1 + step / 100,
        "actor/entropy": 1.5 - step / 100,
        "actor/pg_clipfrac": 0.02,
        "actor/grad_norm": 0.7,
        "critic/score/mean": 0.4,
        "critic/score/max": 1.0,
        "critic/score/min": 0.0,
        "response_length/mean": 210.5,
        "response_length/clip_ratio": 0.01,
        "perf/total_num_tokens": 4096 + step,
        "perf/throughput": 1200.5,
        "perf/max_memory_allocated_gb": 31.2,
    }
    metrics |= {f"timing_s/{s}": 1.0 + i for i, s in enumerate(stages)}
    metrics |= {f"timing_per_token_ms/{s}": 0.02 * (i + 1) for i, s in enumerate(stages[:-1])}
    if step % 5 == 0:
        metrics |= {"val-core/gsm8k/acc/mean": 0.61, "val-core/math/acc/mean": 0.33}
    return metrics


# --- what a drafted row says ------------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "value", "unit"),
    [
        ("total_step_time", 1.5, "s"),
        ("setup_time_s", 1.5, "s"),
        ("gen_latency", 1.5, "s"),
        ("per_token_ms", 1.5, "ms"),
        ("max_memory_allocated_gb", 1.5, "GBy"),
        ("ckpt_disk_free_gib", 1.5, "GiBy"),
        ("cpu_memory_used_mb", 1.5, "MBy"),
        ("peak_memory", 1.5, "GiBy"),
        ("throughput", 1.5, "{token}/s"),
        ("throughput_per_gpu", 1.5, "{token}/s"),
        ("mfu", 1.5, "%"),
        ("mfu", 0.4, "1"),
        ("kl_ent_ratio", 0.5, "1"),
        ("importance_ratio", 1.05, ""),  # a quotient around 1, not a share
        ("is_ratio", 1.05, ""),
        ("masked_correct_pct", 1.5, "%"),
        ("clip_ratio", 0.5, "1"),
        ("clip_ratio", 1.5, ""),  # a ratio beyond 1 is no share: vetoed by the value
        ("truncation_rate", 1.5, "%"),  # a rate of 1.5 is a percentage
        ("num_valid_tokens", 1.5, "{token}"),
        ("mean_gen_tokens_per_sample", 1.5, "{token}"),
        ("tokens_per_sec", 1.5, "{token}/s"),
        ("samples_per_sec_per_gpu", 1.5, "{sample}/s"),
        ("avg_turns_per_sample", 1.5, "{turn}"),
        ("loss", 1.5, ""),
    ],
)
def test_infer_reads_units_from_names_and_suffixes(
    tmp_path: Path, key: str, value: float, unit: str
) -> None:
    text = _draft(tmp_path, [(1, "train", {key: value})])
    assert f"unit: {json.dumps(unit)}" in text


def test_infer_kinds_running_totals_per_step_counts_and_gauges(tmp_path: Path) -> None:
    records = [
        (step, "train", {"consumed_tokens": 512 * step, "num_samples": 64, "loss": 1 / step})
        for step in range(1, 8)
    ]
    rows = {
        row.logger_key: row
        for f in infer([[_write_run(tmp_path / "r.jsonl", records, None)]], EMPTY).files
        for row in f.rows
    }
    # The schema has counter temporality: a running total is a cumulative counter.
    assert rows["consumed_tokens"].kind == "counter"
    assert rows["consumed_tokens"].temporality == "cumulative"
    assert any("running total" in note for note in rows["consumed_tokens"].notes)
    assert rows["num_samples"].kind == "counter"
    assert rows["loss"].kind == "gauge"
    out = tmp_path / "draft"
    out.mkdir()
    draft = infer([[str(tmp_path / "r.jsonl")]], EMPTY)
    for f in draft.files:
        (out / f.file_name).write_text(render(f, ["r.jsonl"]), encoding="utf-8")
    assert "temporality: cumulative" in (out / "train.yaml").read_text(encoding="utf-8")
    assert load_and_check(sorted(out.glob("*.yaml")), root=out, lint=False).ok


def test_infer_turns_label_like_segments_into_families_and_keeps_metric_names_literal(
    tmp_path: Path,
) -> None:
    records = [(s, "", _verl_step(s)) for s in range(1, 11)]
    text = _draft(tmp_path, records)
    assert 'logger_key: "timing_s/{rl.timing.name}"' in text
    assert 'logger_key: "timing_per_token_ms/{rl.timing_per_token.name}"' in text
    assert 'logger_key: "critic/score/{rl.critic.score.statistic}"' in text
    # Metric names under one namespace stay separate rows.
    assert "logger_key: actor/pg_loss" in text
    assert "logger_key: actor/entropy" in text
    assert "values:" in text  # few labels: an enum


def test_infer_gives_a_placeholder_of_many_values_a_budget(tmp_path: Path) -> None:
    datasets = [f"set{i}" for i in range(MAX_ENUM_VALUES + 3)]
    records = [(1, "validation", {f"{d}/accuracy": 0.5 for d in datasets})]
    text = _draft(tmp_path, records)
    assert 'logger_key: "{rl.validation.name}/accuracy"' in text
    assert 'max_cardinality: "64"' in text


def test_infer_presence_from_several_runs_and_loops(tmp_path: Path) -> None:
    a = [
        (
            s,
            "train",
            {
                "loss": 1.0,
                **({"val_acc": 0.5} if s % 5 == 0 else {}),
                **({"warmup_lr": 0.1} if s in (3, 4, 9) else {}),
            },
        )
        for s in range(1, 21)
    ]
    b = [(s, "train", {"loss": 1.0, "critic_loss": 0.3}) for s in range(1, 21)]
    runs = [
        [_write_run(tmp_path / "a.jsonl", a, "grpo")],
        [_write_run(tmp_path / "b.jsonl", b, "ppo")],
    ]
    draft = infer(runs, EMPTY)
    rows = {row.logger_key: row for f in draft.files for row in f.rows}
    assert rows["loss"].requirement_level == "required"
    assert rows["loss"].emitted_by == ["grpo", "ppo"]
    assert rows["val_acc"].requirement_level == "required"
    assert (rows["val_acc"].every, rows["val_acc"].first_step) == (5, None)
    assert rows["critic_loss"].emitted_by == ["ppo"]
    assert rows["warmup_lr"].requirement_level == "conditionally_required"
    assert rows["warmup_lr"].condition is not None
    assert rows["warmup_lr"].condition.startswith("TODO")
    loops = dict(draft.files[0].loops)
    assert set(loops) == {"grpo", "ppo"}
    assert loops["ppo"] == ["train/critic_loss"]


def test_infer_names_pass_the_naming_lints(tmp_path: Path) -> None:
    records = [
        (
            1,
            "train",
            {
                "step_time_ms": 1.0,
                "event_count": 2,
                "ppo_counter": 3,
                "x/sum": 1.0,
                "2nd_stage/loss": 1.0,
            },
        )
    ]
    out = tmp_path / "draft"
    out.mkdir()
    run = _write_run(tmp_path / "run.jsonl", records, None)
    draft = infer([[run]], EMPTY)
    for f in draft.files:
        (out / f.file_name).write_text(render(f, [run]), encoding="utf-8")
    result = load_and_check(sorted(out.glob("*.yaml")), root=out, lint=True)
    codes = {d.code for d in result.diagnostics}
    assert codes <= {"DESCRIPTION_TODO", "ATTRIBUTE_DESCRIPTION_TODO", "UNIT_NOT_UCUM"}, (
        result.diagnostics
    )


# --- the command and the round trip ----------------------------------------------------


def _project(tmp_path: Path) -> Path:
    """A copy of this repository's catalog as a project."""
    root = tmp_path / "project"
    shutil.copytree(REPO / "catalog", root / "catalog")
    (root / "pyproject.toml").write_text(
        '[tool.metric-catalog]\ncatalog = ["catalog/*.yaml"]\n', encoding="utf-8"
    )
    return root


def _live_check_undeclared(root: Path, run: str, capsys: pytest.CaptureFixture[str]) -> list[str]:
    assert main(["live-check", "--root", str(root), "--format", "json", run]) in (0, 1)
    report = json.loads(capsys.readouterr().out)
    return [f["key"] for f in report["findings"] if f["kind"] == "undeclared"]


def test_infer_round_trip_on_nemo_rl_shaped_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _project(tmp_path)
    runs = []
    for loop in LOOPS:
        path = tmp_path / f"{loop}.jsonl"
        lines = [json.dumps({**json.loads(line), "loop": loop}) for line in run_lines(loop, 21)]
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        runs.append(str(path))
    before = _live_check_undeclared(root, runs[0], capsys)
    assert before  # upstream logs keys the catalog does not declare
    code = main(
        ["infer", "--root", str(root), "--out-dir", str(root / "catalog" / "drafted"), *runs]
    )
    assert code == 0
    capsys.readouterr()
    config = root / "pyproject.toml"
    config.write_text(
        '[tool.metric-catalog]\ncatalog = ["catalog/*.yaml", "catalog/drafted/*.yaml"]\n',
        encoding="utf-8",
    )
    assert main(["validate", "--root", str(root)]) == 0
    capsys.readouterr()
    assert main(["lint", "--root", str(root), "--format", "json"]) == 1
    codes = {d["code"] for d in json.loads(capsys.readouterr().out) if d["severity"] == "error"}
    assert "DESCRIPTION_TODO" in codes
    for run in runs:
        assert _live_check_undeclared(root, run, capsys) == [], run


def test_infer_round_trip_on_a_verl_shaped_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _project(tmp_path)
    run = _write_run(tmp_path / "verl.jsonl", [(s, "", _verl_step(s)) for s in range(1, 16)], "ppo")
    draft_file = root / "catalog" / "verl_ppo.yaml"
    assert main(["infer", "--root", str(root), "--out", str(draft_file), run]) == 0
    capsys.readouterr()
    text = draft_file.read_text(encoding="utf-8")
    assert "module: verl_ppo" in text
    assert text.count(f"description: {json.dumps(TODO)}") >= 10
    assert main(["validate", "--root", str(root)]) == 0
    capsys.readouterr()
    # verl's training/global_step repeats step=: drafted under bookkeeping:, not as a row.
    assert "key: training/global_step" in text
    assert _live_check_undeclared(root, run, capsys) == []
    # A second infer over the same run finds nothing left to draft.
    assert main(["infer", "--root", str(root), run]) == 0
    assert "nothing to draft" in capsys.readouterr().err


def test_infer_never_writes_over_a_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = _project(tmp_path)
    run = _write_run(
        tmp_path / "r.jsonl", [(1, "train", {"brand_new": 1.0}), (1, "extra", {"x": 1.0})], None
    )
    taken = tmp_path / "mine.yaml"
    taken.write_text("keep me\n", encoding="utf-8")
    assert main(["infer", "--root", str(root), "--out", str(taken), run]) == 2
    assert "will not overwrite" in capsys.readouterr().err
    assert taken.read_text(encoding="utf-8") == "keep me\n"
    out_dir = tmp_path / "drafts"
    out_dir.mkdir()
    (out_dir / "extra.yaml").write_text("keep me too\n", encoding="utf-8")
    assert main(["infer", "--root", str(root), "--out-dir", str(out_dir), run]) == 2
    assert sorted(p.name for p in out_dir.iterdir()) == ["extra.yaml"]  # nothing written
    assert (out_dir / "extra.yaml").read_text(encoding="utf-8") == "keep me too\n"


def test_infer_prints_yaml_and_drafts_everything_without_a_catalog(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    run = _write_run(
        tmp_path / "r.jsonl", [(1, "train", {"loss": 1.0}), (1, "perf", {"mfu": 0.4})], None
    )
    assert main(["infer", run]) == 0
    captured = capsys.readouterr()
    assert "no catalog files yet" in captured.err
    assert "\n---\n" in captured.out
    assert "logger_key: loss" in captured.out
    assert "logger_key: mfu" in captured.out


def test_infer_refuses_bad_arguments(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = _project(tmp_path)
    assert main(["infer", "--root", str(root), str(tmp_path / "missing.jsonl")]) == 2
    assert "no such file" in capsys.readouterr().err
    assert main(["infer", "--root", str(root), str(tmp_path / "none-*.jsonl")]) == 2
    assert "matches no file" in capsys.readouterr().err
    run = _write_run(tmp_path / "r.jsonl", [(1, "train", {"brand_new": 1.0})], None)
    assert main(["infer", "--root", str(root), "--out", str(tmp_path / "Bad-Name.yaml"), run]) == 2
    assert "is not a module name" in capsys.readouterr().err


def test_description_todo_passes_validate_and_fails_lint(tmp_path: Path) -> None:
    path = tmp_path / "a.yaml"
    path.write_text(
        "owner: a\nmodule: a\ndescription: Rows.\nprefix: train\nteed:\n"
        f'  - logger_key: loss\n    name: rl.policy.loss\n    kind: gauge\n    unit: ""\n'
        f"    description: {json.dumps(TODO)}\n",
        encoding="utf-8",
    )
    assert load_and_check([path], root=tmp_path, lint=False).ok
    linted = load_and_check([path], root=tmp_path, lint=True)
    assert [d.code for d in linted.diagnostics if d.severity.value == "error"] == [
        "DESCRIPTION_TODO"
    ]


@pytest.mark.parametrize(
    ("key", "name", "unit"),
    [
        ("gen_latency_ms", "rl.train.gen_latency", "ms"),
        ("step_duration_ms", "rl.train.step_duration", "ms"),
        ("gen_latency", "rl.train.gen_latency", "s"),
        ("rollout_latency_pct", "rl.train.rollout_latency_value", "%"),  # no time: renamed
    ],
)
def test_a_duration_logged_in_a_prefixed_time_unit_keeps_its_name(
    tmp_path: Path, key: str, name: str, unit: str
) -> None:
    """ms is exported in s, so the duration lint accepts the plain name: no "_value"."""
    run = _write_run(tmp_path / "r.jsonl", [(s, "train", {key: 20.0 + s}) for s in (1, 2)], None)
    ((row,),) = [f.rows for f in infer([[run]], EMPTY).files]
    assert (row.name, row.unit) == (name, unit)
    out = tmp_path / "draft"
    out.mkdir()
    (out / "train.yaml").write_text(render(infer([[run]], EMPTY).files[0], [run]), "utf-8")
    result = load_and_check(sorted(out.glob("*.yaml")), root=out)
    assert [d.code for d in result.diagnostics if d.code == "DURATION_UNIT"] == []


def test_infer_keeps_keys_that_behave_differently_out_of_one_family(tmp_path: Path) -> None:
    """NeMo-Aligner logs consumed_samples under train_rollouts/ (a running total) and
    val_rollouts/ (the validation batch's size): one family row would have one kind."""
    records = [
        (
            s,
            "",
            {
                "train_rollouts/consumed_samples": 64 * s,
                "val_rollouts/consumed_samples": 32.5,
                "train_rollouts/response_lengths": 100.0 + s,
                "val_rollouts/response_lengths": 90.0 + s,
            },
        )
        for s in range(1, 8)
    ]
    text = _draft(tmp_path, records)
    assert "logger_key: train_rollouts/consumed_samples" in text
    assert "logger_key: val_rollouts/consumed_samples" in text
    assert '/consumed_samples"' not in text  # no family row of both
    # Alike: one row, the split glued to the key (train_, val_) read as its prefixes.
    assert "logger_key: rollouts/response_lengths" in text
    assert 'prefixes: ["train_", "val_"]' in text


@pytest.mark.parametrize("head", ["timers", "timer", "elapsed"])
def test_infer_drafts_timer_sections_in_seconds(tmp_path: Path, head: str) -> None:
    """NeMo's SyncTimer and Megatron-LM's timers log seconds under timers/<section>."""
    sections = ("generate", "critic_wait", "logprobs", "init_logprobs")
    records = [(s, "", {f"{head}/{name}": 0.5 + s for name in sections}) for s in range(1, 6)]
    text = _draft(tmp_path, records)
    assert f'logger_key: "{head}/{{' in text
    assert 'unit: "s"' in text


def _trainer_history(steps: int = 8) -> list[tuple[int, str, dict[str, object]]]:
    """A transformers Trainer's log: training records, eval_ records every 4 steps and the
    train_ summary at the end (the shapes of trainer_state.json's log_history)."""
    records: list[tuple[int, str, dict[str, object]]] = []
    for s in range(1, steps + 1):
        records.append(
            (
                s,
                "",
                {
                    "loss": 0.5 / s,
                    "learning_rate": 1e-6 * (1 - s / (steps + 1)),
                    "epoch": s / steps,
                    "kl": 0.01 * s,
                    "entropy": 0.9 - s / 100,
                    "completions/mean_length": 200.0 + s,
                },
            )
        )
        if s % 4 == 0:
            evaluated = {"eval_loss": 0.4 / s, "eval_kl": 0.02, "eval_runtime": 61.5}
            evaluated |= {"eval_samples_per_second": 3.2, "eval_completions/mean_length": 190.0}
            records.append((s, "", {**evaluated, "epoch": s / steps}))
    summary = {"train_runtime": 512.4, "train_samples_per_second": 1.2, "total_flos": 0.0}
    records.append((steps, "", {**summary, "epoch": 1.0}))
    return records


def test_infer_drafts_an_eval_variant_as_a_prefix_of_its_row(tmp_path: Path) -> None:
    """eval_loss beside loss is loss logged by an evaluation: one row under ["", eval_]."""
    text = _draft(tmp_path, _trainer_history())
    assert "logger_key: loss\n" in text
    assert "logger_key: completions/mean_length\n" in text
    assert text.count('prefixes: ["", "eval_"]') == 3  # loss, kl, completions/mean_length
    assert "eval_loss" not in text
    assert "eval_kl" not in text
    # Only logged glued (eval_runtime, train_runtime): one row teed under both splits.
    assert 'logger_key: runtime\n    prefixes: ["eval_", "train_"]' in text
    assert 'logger_key: samples_per_second\n    prefixes: ["eval_", "train_"]' in text


@pytest.mark.parametrize(
    ("keys", "kept"),
    [
        ({"eval_accuracy": 0.5}, "logger_key: eval_accuracy"),  # nothing else: a key
        ({"train_rollouts/size": 32.0}, "logger_key: train_rollouts/size"),
        ({"evaluation_loss": 0.2, "loss": 0.3}, "logger_key: evaluation_loss"),
    ],
)
def test_infer_keeps_a_glued_looking_key_that_has_no_bare_or_split_twin(
    tmp_path: Path, keys: dict[str, object], kept: str
) -> None:
    text = _draft(tmp_path, [(s, "", dict(keys)) for s in range(1, 5)])
    assert kept in text
    assert "prefixes:" not in text


def test_infer_drafts_a_trainers_epoch_and_flop_estimate_as_bookkeeping(tmp_path: Path) -> None:
    text = _draft(tmp_path, _trainer_history())
    assert "bookkeeping:\n  - key: epoch\n" in text
    assert "  - key: total_flos\n" in text
    assert "logger_key: epoch" not in text
    assert "logger_key: total_flos" not in text


def test_infer_makes_no_family_of_whole_keys_and_no_fraction_of_a_learning_rate(
    tmp_path: Path,
) -> None:
    """Twelve one-segment keys are twelve metrics, however many: no {placeholder} row."""
    names = "loss kl entropy reward reward_std grad_norm learning_rate step_time a b c d"
    records = [(s, "", dict.fromkeys(names.split(), 0.1 * s)) for s in range(1, 5)]
    text = _draft(tmp_path, records)
    assert "{rl." not in text
    assert text.count("  - logger_key:") == 12
    learning_rate = "logger_key: learning_rate\n    name: rl.learning_rate\n    kind: gauge\n"
    assert learning_rate + '    unit: ""' in text


def test_infer_keeps_a_key_whose_name_gives_another_unit_out_of_a_family(
    tmp_path: Path,
) -> None:
    """Timers under timing_s/ are seconds, but timing_s/update_ratio is a fraction."""
    keys = {"timing_s/gen": 1.5, "timing_s/ref": 0.4, "timing_s/update_ratio": 0.3}
    text = _draft(tmp_path, [(s, "", dict(keys)) for s in range(1, 5)])
    assert 'logger_key: "timing_s/{' in text
    assert "logger_key: timing_s/update_ratio\n" in text


def test_infer_names_a_rate_per_second_without_a_dangling_per(tmp_path: Path) -> None:
    records = [(s, "", {"perf/samples_per_second": 3.0 + s}) for s in range(1, 5)]
    text = _draft(tmp_path, records)
    assert "name: rl.perf.samples_rate" in text
    assert 'unit: "{sample}/s"' in text
