"""``infer`` on code nobody here has read: units from the whole key and its values, step
axes as a loop's ``step_keys``, families only over agreeing keys, scale clashes, ``every``
and loop-aware presence (issues #38 and #40)."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bench.flat_project import EXPECTED, STEP_KEYS, write_runs
from codegen.catalog.model import Catalog
from codegen.catalog.pipeline import load_and_check
from codegen.catalog.words import table
from codegen.cli import main
from codegen.infer import infer, render
from codegen.infer.draft import Draft, DraftFile, DraftRow
from codegen.infer.units import Values, key_unit

EMPTY = Catalog(())


def _flat(path: Path, lines: list[dict[str, object]]) -> list[str]:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return [str(path)]


def _draft(runs: list[list[str]]) -> Draft:
    return infer(runs, EMPTY, input_format="flat-jsonl")


def _rows(draft: Draft) -> dict[str, list[DraftRow]]:
    found: dict[str, list[DraftRow]] = {}
    for draft_file in draft.files:
        for row in draft_file.rows:
            found.setdefault(row.logger_key, []).append(row)
    return found


def _text(draft: Draft) -> str:
    return "\n---\n".join(render(f, draft.observations.runs) for f in draft.files)


# --- units from the whole name and the values -------------------------------------------


@pytest.mark.parametrize(
    ("key", "low", "high", "unit"),
    [
        # timers: anywhere in the key, a context included
        ("perf/actor_train_time", 1.0, 9.0, "s"),
        ("timing/step", 1.0, 9.0, "s"),
        ("timeperf/rollout_onload", 1.0, 9.0, "s"),
        ("misc/weight_sync_elapse", 1.0, 9.0, "s"),
        ("perf/request/e2e_latency/max", 1.0, 9.0, "s"),
        ("perf/stepTime", 1.0, 9.0, "s"),
        ("time/request_count", 3.0, 12.0, ""),  # a count under time/ is a count
        ("perf/step_time", -1.0, 9.0, ""),  # a duration is never negative: vetoed
        # rates and FLOP rates
        ("perf/actor_train_tflops", 100.0, 200.0, "10*12{FLOP}/s"),
        ("perf/actor_train_tok_per_s", 1e3, 9e3, "{token}/s"),
        ("perf/tps", 1e3, 9e3, "{token}/s"),
        ("perf/tokens_per_gpu_per_sec", 1e3, 9e3, "{token}/s"),
        ("perf/tokPerSec", 1e3, 9e3, "{token}/s"),
        # shares, confirmed by the values
        ("actor/pg_clipfrac", 0.0, 0.3, "1"),
        ("train/clip_frac", 0.0, 0.3, "1"),
        ("rollout/mask_ratio", 0.0, 0.3, "1"),
        ("eval/accuracy", 0.2, 0.8, "1"),
        ("actor/clip_ratio/high", 0.0, 0.1, "1"),
        ("perf/wait_time_ratio", 0.0, 0.4, "1"),  # a ratio of times is a ratio
        ("ppo_actor/no_eos_ratios/avg", 0.0, 0.4, "1"),  # a mean of ratios
        ("eval/gsm8k-pass@4", 0.2, 0.6, "1"),
        ("eval/accuracy", 0.0, 150.0, ""),  # beyond a percentage: no share
        ("eval/accuracy", 0.0, 87.5, "%"),
        ("gpu/util", 0.0, 0.9, "1"),
        ("gpu/util", 0.0, 87.0, "%"),
        # quotients are no shares
        ("actor/importance_ratio", 0.8, 1.2, ""),
        ("rollout/is_ratio", 0.9, 1.1, ""),
        ("actor/ratio_min", 0.7, 0.99, ""),  # a bare ratio: PPO's probability ratio
        ("train/learning_rate", 1e-6, 1e-5, ""),
        # counts, sizes and what is none
        ("rollout/response_length", 10.0, 900.0, "{token}"),
        ("token/response_length/diff", -50.0, 90.0, "{token}"),  # a difference keeps it
        ("group/response_length_diff/max", 0.0, 90.0, "{token}"),
        ("misc/pi_buffer_len", 10.0, 900.0, ""),  # the length of a buffer counts items
        ("version_stats/sample_staleness_avg", 0.0, 3.0, ""),
        ("train/grad_norm_nan", 0.0, 2.0, ""),
        ("misc/vram_allocated", 1e3, 3e4, "MiBy"),
        ("misc/vram_allocated", 1.0, 30.0, "GiBy"),
        ("train/loss", 0.1, 2.0, ""),
    ],
)
def test_infer_reads_the_unit_from_the_whole_key_and_its_values(
    key: str, low: float, high: float, unit: str
) -> None:
    assert key_unit("", key.split("/"), Values(low, high)) == unit


_WORDS = st.sampled_from(
    sorted(
        table(
            "time timing step loss ratio frac acc accuracy pct util mfu kl importance is "
            "tokens per s sec ms count num memory gb tflops throughput rate lr mean max"
        )
    )
)


@settings(max_examples=300, derandomize=True, deadline=None)
@given(
    st.lists(st.lists(_WORDS, min_size=1, max_size=3), min_size=1, max_size=3),
    st.floats(-1e4, 1e4, allow_nan=False),
    st.floats(0, 1e4, allow_nan=False),
)
def test_infer_never_drafts_a_unit_the_values_refuse(
    segments: list[list[str]], low: float, spread: float
) -> None:
    """A share lies in [0, 1], a percentage in [0, 100], a duration is never negative."""
    values = Values(low, low + spread)
    unit = key_unit("", ["_".join(words) for words in segments], values)
    if unit in ("1", "%", "s", "ms"):
        assert low >= 0
    if unit == "1":
        assert low + spread <= 1
    if unit == "%":
        assert low + spread <= 100


# --- step axes, loops and presence --------------------------------------------------------


def test_infer_puts_step_axes_under_their_loops_step_keys_and_drafts_no_row_for_them(
    tmp_path: Path,
) -> None:
    draft = _draft([[p] for p in write_runs(tmp_path)])
    rows = _rows(draft)
    assert not {"train/step", "rollout/step", "_step"} & set(rows)
    declared = {loop: keys for f in draft.files for loop, keys in f.step_keys.items()}
    assert declared == {loop: [(key, "")] for loop, key in STEP_KEYS.items()}
    text = _text(draft)
    assert "    step_keys:\n      - key: train/step\n" in text


def test_infer_judges_presence_on_the_step_axis_not_the_trackers_call_counter(
    tmp_path: Path,
) -> None:
    """Two log calls per training step: W&B's _step counts both, train/step does not."""
    lines: list[dict[str, object]] = []
    for step in range(1, 21):
        lines.append({"_step": 2 * step, "train/step": step, "train/loss": 1.0 / step})
        lines.append({"_step": 2 * step + 1, "train/step": step, "train/kl": 0.1})
    rows = _rows(_draft([_flat(tmp_path / "run.jsonl", lines)]))
    for key in ("train/loss", "train/kl"):
        (row,) = rows[key]
        assert (row.requirement_level, row.condition, row.every) == ("required", None, None)


def test_infer_counts_a_record_before_the_step_axis_appears_on_the_records_step(
    tmp_path: Path,
) -> None:
    """The first record (an evaluation at step 0) holds no train/step yet."""
    lines: list[dict[str, object]] = [{"_step": 0, "train/loss": 1.0, "eval/acc": 0.2}]
    lines += [{"_step": s, "train/step": s, "train/loss": 1.0} for s in range(1, 9)]
    (row,) = _rows(_draft([_flat(tmp_path / "run.jsonl", lines)]))["train/loss"]
    assert (row.requirement_level, row.condition) == ("required", None)


@pytest.mark.parametrize("key", ["timing/step", "misc/query_step", "train/step_decay"])
def test_infer_drafts_keys_that_only_end_like_a_step_as_metrics(tmp_path: Path, key: str) -> None:
    lines = [{"step": s, key: 1.5 * s if key == "timing/step" else 3 * s} for s in range(1, 9)]
    draft = _draft([_flat(tmp_path / "run.jsonl", lines)])
    assert key in _rows(draft)
    assert not any(f.step_keys for f in draft.files)


def test_infer_judges_keys_only_against_runs_of_their_own_loop(tmp_path: Path) -> None:
    """A trainer run and a rollout run: neither makes the other's keys conditional."""
    rows = _rows(_draft([[p] for p in write_runs(tmp_path)]))
    for key in ("train/loss", "rollout/reward_mean"):
        (row,) = rows[key]
        assert row.requirement_level == "required"
        assert row.condition is None


def test_infer_takes_runs_sharing_a_step_axis_for_one_loop(tmp_path: Path) -> None:
    """Evaluation off in the second run: no eval/step there, and still the same trainer."""
    first = [
        {"_step": s, "train/step": s, "eval/step": s // 5, "train/loss": 1.0} for s in range(9)
    ]
    second = [{"_step": s, "train/step": s, "train/loss": 1.0} for s in range(9)]
    draft = _draft([_flat(tmp_path / "a.jsonl", first), _flat(tmp_path / "b.jsonl", second)])
    (loss,) = _rows(draft)["train/loss"]
    assert (loss.emitted_by, loss.requirement_level) == (["train"], "required")
    assert [name for f in draft.files for name, _ in f.loops] == ["train"]


def test_infer_keeps_a_key_missing_from_a_run_of_its_own_loop_conditional(tmp_path: Path) -> None:
    first = [{"_step": s, "train/step": s, "train/loss": 1.0, "train/kl": 0.1} for s in range(9)]
    second = [{"_step": s, "train/step": s, "train/loss": 1.0} for s in range(9)]
    rows = _rows(_draft([_flat(tmp_path / "a.jsonl", first), _flat(tmp_path / "b.jsonl", second)]))
    (kl,) = rows["train/kl"]
    assert kl.requirement_level == "conditionally_required"
    assert kl.condition is not None
    assert kl.condition.startswith("TODO")


# --- every -----------------------------------------------------------------------------------


def _periodic(tmp_path: Path, steps: range, logged: set[int]) -> DraftRow:
    lines = [{"step": s, "loss": 1.0, **({"val_acc": 0.5} if s in logged else {})} for s in steps]
    (row,) = _rows(_draft([_flat(tmp_path / "run.jsonl", lines)]))["val_acc"]
    return row


def test_infer_gives_a_key_logged_every_five_steps_every_not_first_step(tmp_path: Path) -> None:
    row = _periodic(tmp_path, range(1, 31), set(range(5, 31, 5)))
    assert (row.every, row.first_step, row.requirement_level) == (5, None, "required")
    assert 'every: "5"' in render_row(row)


def test_infer_says_a_late_start_of_a_periodic_key_with_first_step(tmp_path: Path) -> None:
    row = _periodic(tmp_path, range(1, 41), set(range(20, 41, 5)))
    assert (row.every, row.first_step) == (5, 20)


def test_infer_gives_a_period_off_its_multiples_its_phase(tmp_path: Path) -> None:
    """Steps 1, 6, 11...: every 5 steps at phase 1 (live-check's schedule takes a phase)."""
    row = _periodic(tmp_path, range(1, 31), set(range(1, 31, 5)))
    assert (row.every, row.phase, row.first_step) == (5, 1, None)
    assert any('every: "5" with phase: "1"' in note for note in row.notes)
    assert '    every: "5"\n    phase: "1"\n' in render_row(row)


def test_infer_gives_a_zero_based_period_phase_minus_one(tmp_path: Path) -> None:
    """Steps 4, 9, 14...: a 0-based loop's (step + 1) % 5 == 0 is phase -1."""
    row = _periodic(tmp_path, range(0, 30), set(range(4, 30, 5)))
    assert (row.every, row.phase, row.first_step) == (5, -1, None)


def test_infer_gives_no_every_to_keys_of_a_trainer_that_logs_every_ten_steps(
    tmp_path: Path,
) -> None:
    lines = [{"step": s, "loss": 1.0, "kl": 0.1} for s in range(10, 201, 10)]
    rows = _rows(_draft([_flat(tmp_path / "run.jsonl", lines)]))
    assert [rows[k][0].every for k in ("loss", "kl")] == [None, None]


def render_row(row: DraftRow) -> str:
    draft_file = DraftFile("m", "")
    draft_file.rows.append(row)
    return render(draft_file, ["run"])


# --- scale clashes ---------------------------------------------------------------------------


def test_infer_drafts_one_row_per_loop_for_a_key_whose_scale_differs_between_loops(
    tmp_path: Path,
) -> None:
    draft = _draft([[p] for p in write_runs(tmp_path)])
    rows = sorted(_rows(draft)["gpu/util"], key=lambda r: r.emitted_by)
    assert [(r.emitted_by, r.unit) for r in rows] == [(["rollout"], "%"), (["train"], "1")]
    assert len({r.name for r in rows}) == 2
    (clash,) = [n for n in draft.notes() if n.startswith("scale clash")]
    assert "'gpu/util'" in clash
    assert "one row per loop" in clash


def test_infer_reports_a_scale_clash_within_one_loop_instead_of_merging_it(
    tmp_path: Path,
) -> None:
    first = [{"step": s, "gpu/util": 0.5} for s in range(1, 9)]
    second = [{"step": s, "gpu/util": 55.0} for s in range(1, 9)]
    draft = _draft([_flat(tmp_path / "a.jsonl", first), _flat(tmp_path / "b.jsonl", second)])
    (row,) = _rows(draft)["gpu/util"]
    assert any("scale clash" in note for note in row.notes)
    (clash,) = [n for n in draft.notes() if n.startswith("scale clash")]
    assert "make the code paths agree" in clash


def test_infer_reports_no_scale_clash_when_runs_agree(tmp_path: Path) -> None:
    first = [{"step": s, "gpu/util": 0.5} for s in range(1, 9)]
    second = [{"step": s, "gpu/util": 0.7} for s in range(1, 9)]
    draft = _draft([_flat(tmp_path / "a.jsonl", first), _flat(tmp_path / "b.jsonl", second)])
    assert not [n for n in draft.notes() if n.startswith("scale clash")]
    assert [r.unit for r in _rows(draft)["gpu/util"]] == ["1"]


# --- families over agreeing keys --------------------------------------------------------------


def test_infer_makes_no_family_of_metric_names_whose_values_and_units_differ(
    tmp_path: Path,
) -> None:
    """rollout/{name} must not group advantages, kl, truncated and round numbers."""
    names = ["advantages", "kl", "truncated", "round_number", "returns", "rewards"]
    names += ["log_probs", "ref_log_probs", "entropy", "values", "raw_reward", "scores"]
    lines = [
        {
            "step": s,
            **{f"rollout/{n}": (0.1 * s if i % 2 else -0.1 * s) for i, n in enumerate(names)},
            "rollout/truncated": s % 2,
            "rollout/round_number": s % 4,
        }
        for s in range(1, 9)
    ]
    rows = _rows(_draft([_flat(tmp_path / "run.jsonl", lines)]))
    assert not [k for k in rows if "{" in k]
    assert len(rows) == len(names)


def test_infer_keeps_timers_of_named_phases_one_family_in_seconds(tmp_path: Path) -> None:
    phases = [f"phase{c}" for c in "abcdefghijkl"]
    timers = {f"perf/{p}_time": 0.5 + i for i, p in enumerate(phases)}
    lines = [{"step": s, **timers} for s in (1, 2)]
    rows = _rows(_draft([_flat(tmp_path / "run.jsonl", lines)]))
    (family,) = [r for k, rs in rows.items() for r in rs if "{" in k]
    assert family.unit == "s"


# --- the small project, end to end ------------------------------------------------------------


def test_infer_drafts_every_row_of_a_flat_dict_project_as_a_person_would(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """#40's newcomer project: every drafted row kept as drafted, the draft validates and
    live-check finds nothing on either run."""
    runs = write_runs(tmp_path)
    draft = _draft([[p] for p in runs])
    drafted = {
        (row.logger_key, tuple(row.emitted_by)): (
            row.unit,
            row.kind,
            row.requirement_level,
            row.every,
            tuple(row.emitted_by),
        )
        for f in draft.files
        for row in f.rows
    }
    assert drafted == {key: tuple(row) for key, row in EXPECTED.items()}
    root = tmp_path / "project"
    (root / "catalog").mkdir(parents=True)
    (root / "pyproject.toml").write_text(
        '[tool.metric-catalog]\ncatalog = ["catalog/*.yaml"]\n', encoding="utf-8"
    )
    for draft_file in draft.files:
        (root / "catalog" / draft_file.file_name).write_text(
            render(draft_file, runs), encoding="utf-8"
        )
    assert main(["validate", "--root", str(root)]) == 0
    for run in runs:
        code = main(["live-check", "--root", str(root), "--input-format", "flat-jsonl", run])
        report = capsys.readouterr().out
        assert code == 0, report
        assert "undeclared 0, missing 0" in report


@settings(max_examples=40, derandomize=True, deadline=None)
@given(st.integers(2, 9), st.integers(1, 4))
def test_infer_gives_any_period_every_and_a_late_start_first_step(period: int, start: int) -> None:
    """Logged at start*period, (start+1)*period...: every the period, first_step past it."""
    # A folder per example: hypothesis runs many examples in one pytest tmp_path.
    with tempfile.TemporaryDirectory() as folder:
        row = _periodic(
            Path(folder), range(1, 12 * period), set(range(start * period, 12 * period, period))
        )
    assert row.every == period
    assert row.first_step == (start * period if start > 1 else None)


def test_infer_writes_step_keys_into_a_single_draft_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runs = write_runs(tmp_path)
    out = tmp_path / "grpo_draft.yaml"
    args = ["infer", "--root", str(tmp_path), "--input-format", "flat-jsonl", "--out", str(out)]
    assert main([*args, *runs]) == 0
    assert "scale clash: 'gpu/util'" in capsys.readouterr().err
    text = out.read_text(encoding="utf-8")
    assert "      - key: train/step\n" in text
    assert "      - key: rollout/step\n" in text
    assert 'every: "5"' in text


def test_infer_puts_a_run_of_a_declared_loop_in_that_loop(tmp_path: Path) -> None:
    """The catalog declares loop train: a run stepping on train/step is of it, not train_2."""
    root = tmp_path / "project"
    (root / "catalog").mkdir(parents=True)
    (root / "catalog" / "loops.yaml").write_text(
        "owner: team.rl\nmodule: loops\ndescription: Loops.\nloops:\n"
        "  - name: train\n    description: The trainer.\n",
        encoding="utf-8",
    )
    catalog = load_and_check(sorted((root / "catalog").glob("*.yaml")), root=root).catalog
    assert catalog is not None
    lines = [{"_step": s, "train/step": s, "train/loss": 1.0} for s in range(1, 9)]
    draft = infer([_flat(tmp_path / "run.jsonl", lines)], catalog, input_format="flat-jsonl")
    (row,) = _rows(draft)["train/loss"]
    assert row.emitted_by == ["train"]
    assert not any(f.loops for f in draft.files)
    assert [b.key for b in draft.bookkeeping] == ["train/step"]


def _jsonl_run(path: Path, config: dict[str, object], period: int) -> list[str]:
    """A JsonlLogger run with its configuration header, validation every ``period``."""
    lines: list[dict[str, object]] = [{"config": config}]
    for step in range(1, 6 * period + 1):
        metrics: dict[str, object] = {"loss": 1.0}
        if step % period == 0:
            metrics["val_acc"] = 0.5
        lines.append({"step": step, "prefix": "train", "metrics": metrics})
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return [str(path)]


def test_infer_names_the_configuration_value_a_period_differs_by_between_runs(
    tmp_path: Path,
) -> None:
    runs = [
        _jsonl_run(tmp_path / "a.jsonl", {"eval_every": 4, "save_every": 10}, 4),
        _jsonl_run(tmp_path / "b.jsonl", {"eval_every": 6, "save_every": 10}, 6),
    ]
    (row,) = _rows(infer(runs, EMPTY))["val_acc"]
    assert row.every == "config.eval_every"


@pytest.mark.parametrize(
    ("configs", "every"),
    [
        (({"a": 4, "b": 4}, {"a": 4, "b": 4}), 4),  # two values say so: the literal period
        (({"x": 1}, {"x": 1}), 4),  # none says so
    ],
)
def test_infer_keeps_a_literal_period_when_no_one_configuration_value_says_it(
    tmp_path: Path, configs: tuple[dict[str, object], dict[str, object]], every: int
) -> None:
    runs = [_jsonl_run(tmp_path / f"{i}.jsonl", c, 4) for i, c in enumerate(configs)]
    (row,) = _rows(infer(runs, EMPTY))["val_acc"]
    assert row.every == every


@settings(max_examples=30, derandomize=True, deadline=None)
@given(
    # (a bare "step" is the flat format's own step, read as the record's)
    st.sampled_from(["global_step", "train/step", "rollout/global_step", "trainer/iteration"]),
    st.lists(_WORDS, min_size=1, max_size=6, unique=True),
    st.integers(1, 3),
)
def test_infer_never_drafts_a_step_axis_as_a_row(axis: str, names: list[str], gap: int) -> None:
    """Whatever else a run logs, its step axis is a loop's step key, never a row."""
    with tempfile.TemporaryDirectory() as folder:
        lines = [{"_step": i, axis: i * gap, **{f"m/{n}": 0.5 for n in names}} for i in range(1, 9)]
        draft = _draft([_flat(Path(folder) / "run.jsonl", lines)])
    assert axis not in _rows(draft)
    assert [(axis, "")] in [keys for f in draft.files for keys in f.step_keys.values()]
