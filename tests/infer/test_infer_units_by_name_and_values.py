"""``infer`` reads a unit from the whole key and its values (issue #38, build item 4):
a unit written out after a name, percentages whose values say share or percent,
utilization acronyms, at-k and 0/1 outcome shares, token lengths in compounds and
behind participles, counts of end markers, and a backend's step metric as a step axis.

Every rule has a firing and a non-firing case; the keys are written here in the shapes
real trainers log, not copied from any of them.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from codegen.catalog.model import Catalog
from codegen.infer import infer
from codegen.infer.draft import Draft, DraftRow
from codegen.infer.units import Values, key_unit
from tests.runs.test_live_check_wandb import container, history, item, metric

EMPTY = Catalog(())


def _unit(key: str, low: float, high: float) -> str:
    return key_unit("", key.split("/"), Values(low, high))


@pytest.mark.parametrize(
    ("key", "low", "high", "unit"),
    [
        # a unit written out after the name wins over the name's words ...
        ("worker_perf/pct_time_weight_sync (%)", 0.0, 47.0, "%"),
        ("worker_perf/time_weight_sync (s)", 0.5, 9.0, "s"),
        ("worker_perf/peak_alloc [GiB]", 1.0, 30.0, "GiBy"),
        ("worker_perf/idle_steps (%)", 0.0, 35.0, "%"),  # not {step}: the key says %
        ("worker_perf/padded_share (%)", 0.0, 0.4, "1"),  # 0-1 values: a share
        # ... unless it is no unit, or the values refuse it
        ("worker_perf/time_weight_sync (s)", -1.0, 9.0, ""),
        ("worker_perf/loss (ce)", 0.1, 2.0, ""),
        # a percentage by its first word: of time, not a time
        ("perf/pct_time_in_rollout", 0.0, 60.0, "%"),
        ("perf/percent_time_waiting", 0.0, 0.6, "1"),
        ("perf/time_in_rollout", 0.5, 60.0, "s"),  # no percent word: a time
        # percent words: the values decide share (0-1) or percentage (past 1)
        ("batch/dropped_prompts_pct", 0.0, 0.25, "1"),
        ("batch/percent_kept_mean", 0.2, 0.4, "1"),
        ("batch/dropped_prompts_pct", 0.0, 25.0, "%"),
        ("batch/dropped_prompts_pct", 0.0, 250.0, ""),  # past 100: neither
        ("batch/dropped_prompts_pct", 0.0, 0.0, "%"),  # zeros say nothing: the name stands
        # utilization acronyms: FLOPs (mfu, hfu) or memory bandwidth (mbu)
        ("learner_mbu", 30.0, 60.0, "%"),
        ("learner_mbu", 0.3, 0.6, "1"),
        ("learner_gpu", 3.0, 7.0, ""),  # a gpu is no utilization
        # at-k written in words: a share in [0, 1]
        ("eval/pass_at_8", 0.1, 0.6, "1"),
        ("eval/pass_at_8_unbiased", 0.1, 0.6, "1"),
        ("eval/pass_at_8", 0.0, 12.0, ""),  # past 1: no share
        ("eval/reward_at_end", 0.1, 0.6, ""),  # no number after "at"
        # the mean of 0/1 outcomes, the outcome the head of its segment
        ("rewards/format/successes", 0.3, 0.4, "1"),
        ("rewards/successes_mean", 0.3, 0.4, "1"),
        ("critic/correct/mean", 0.3, 0.4, "1"),
        ("val_correct/gsm8k/mean", 0.3, 0.4, "1"),
        ("rewards/correct_answer_reward", 0.3, 0.8, ""),  # a reward, "correct" qualifies it
        ("num_correct", 0.0, 1.0, ""),  # counts them
        ("rewards/successes", 0.0, 12.0, ""),  # past 1: a count of successes
        # a state of each sample (a participle alone), its mean varying in [0, 1]
        ("rollout/truncated", 0.03, 0.09, "1"),
        ("actor/formatted", 0.5, 0.9, "1"),
        ("rollout/accepted", 1.0, 1.0, ""),  # a constant 1.0: an event marker's average
        ("rollout/filtered", 0.0, 12.0, ""),  # past 1: a count
        ("actor/grad_norm_clipped", 0.3, 0.9, ""),  # qualifies a norm: no state
        # token lengths: in a compound, behind a participle, of a statistic's qualifier
        ("val/sequence_lengths_unsolved", 900.0, 1300.0, "{token}"),
        ("batch/prompt_lengths_filtered", 90.0, 300.0, "{token}"),
        ("global_seqlen/mean", 4e5, 5e5, "{token}"),
        ("global_seqlen/balanced_min", 4e5, 5e5, "{token}"),
        ("global_seqlen/minmax_diff", 0.0, 9e3, "{token}"),
        ("train/speed", 1.0, 3.0, ""),  # short words ending "ed" are no participles
        ("misc/pi_buffer_len", 10.0, 900.0, ""),  # a container's length counts items
        # a count of end markers counts the sequences they end
        ("train/num_stop_tokens", 12.0, 16.0, "{sequence}"),
        ("train/num_eos_tokens", 12.0, 16.0, "{sequence}"),
        ("train/num_valid_tokens", 100.0, 900.0, "{token}"),
        # an episode's length counts environment steps; a sequence's, tokens
        ("rollout/ep_len_mean", 20.0, 500.0, "{step}"),
        ("eval/mean_ep_length", 20.0, 500.0, "{step}"),
        ("charts/episodic_length", 20.0, 500.0, "{step}"),
        ("episode/length", 20.0, 500.0, "{step}"),  # the qualifier in the segment before
        ("agent/traj_len/max", 2.0, 9.0, "{step}"),
        ("rollout/response_length/mean", 90.0, 900.0, "{token}"),
        ("batch/prompt_len", 90.0, 300.0, "{token}"),
        ("rollout/episode_tokens", 900.0, 3000.0, "{token}"),  # tokens, not a length
        # gymnasium's one-letter episode statistics: return, length, elapsed time
        ("episode/l_mean", 20.0, 500.0, "{step}"),
        ("episode/t_mean", 0.5, 30.0, "s"),
        ("episode/r_mean", 2.0, 30.0, ""),
        ("episode/t_mean", -0.5, 30.0, ""),  # a negative time is none
        ("train/t_mean", 0.5, 30.0, ""),  # a letter alone, no episode: nothing
        ("policy/l_mean", 0.5, 30.0, ""),
        # an environment step rate: frames or steps per second
        ("time/fps", 300.0, 2900.0, "{step}/s"),  # not a time though under time/
        ("charts/SPS", 300.0, 2900.0, "{step}/s"),
        ("train/env_steps_per_second", 3.0, 9.0, "{step}/s"),
        ("charts/SPS", -1.0, 2900.0, ""),  # a negative rate is none
        ("time/rollout", 3.0, 9.0, "s"),
        # a level word after an estimator: the estimator sets the unit
        ("rollout_correction/chi2_token", 0.0, 3.0, ""),
        ("actor/kl_token", 0.0, 0.3, ""),
        ("actor/ppo_kl_token_mean", 0.0, 0.2, ""),
        ("train/num_token", 90.0, 900.0, "{token}"),  # a count of them
        ("rollout/response_token", 90.0, 900.0, "{token}"),  # no estimator before it
    ],
)
def test_infer_reads_a_unit_from_the_whole_name_and_the_values(
    key: str, low: float, high: float, unit: str
) -> None:
    assert _unit(key, low, high) == unit


_SCALED_NAMES = st.sampled_from(
    [
        "batch/dropped_pct",
        "batch/percent_kept",
        "pct_time_waiting",
        "perf/mfu",
        "perf/learner_mbu",
        "gpu/util",
        "worker/busy (%)",
    ]
)


@settings(max_examples=200, derandomize=True, deadline=None)
@given(_SCALED_NAMES, st.floats(0.0, 1.0), st.floats(0.011, 1.0))
def test_infer_moves_a_share_to_percent_when_the_values_are_scaled_by_100(
    key: str, low_part: float, high: float
) -> None:
    """The same name: values in [0, 1] are a share, the same values times 100 a percentage."""
    low = low_part * high
    assert _unit(key, low, high) == "1"
    assert _unit(key, low * 100, high * 100) == "%"


_NAME_WORDS = st.sampled_from(
    ["time", "pct", "tokens", "mfu", "ratio", "step", "count", "sync", "wait", "loss", "len"]
)


@settings(max_examples=200, derandomize=True, deadline=None)
@given(
    st.lists(_NAME_WORDS, min_size=1, max_size=4),
    st.sampled_from([("s", "s"), ("ms", "ms"), ("sec", "s"), ("GiB", "GiBy"), ("%", "%")]),
    st.floats(0.0, 50.0),
    st.floats(1.5, 50.0),
)
def test_infer_takes_a_unit_written_after_the_name_whatever_its_words(
    words: list[str], spelled: tuple[str, str], low: float, spread: float
) -> None:
    """Whatever the name's words say (``pct_time_step``), a written-out unit stands when
    the values allow it (here never negative and past 1, so ``%`` stays ``%``)."""
    written, unit = spelled
    assert _unit(f"worker/{'_'.join(words)} ({written})", low, low + spread) == unit


@settings(max_examples=200, derandomize=True, deadline=None)
@given(
    st.tuples(
        st.sampled_from(["episode", "episodic", "ep", "trajectory", "traj"]),
        st.sampled_from(["response", "prompt", "sequence", "completion"]),
    ),
    st.sampled_from(["length", "len", "lengths"]),
    st.tuples(
        st.sampled_from(["rollout/", "eval/", "charts/", "train/agent/"]),
        st.sampled_from(["{}_{}", "{}/{}", "{}-{}", "mean_{}_{}"]),
        st.sampled_from(["", "/mean", "_max", "/min"]),
    ),
    st.floats(1.0, 1e4),
)
def test_infer_counts_an_episode_length_in_steps_and_a_sequence_length_in_tokens(
    qualifiers: tuple[str, str], length: str, shape: tuple[str, str, str], high: float
) -> None:
    """However the words are joined and whatever statistic follows, the same length word
    is ``{step}`` after an episode word and ``{token}`` after a sequence word."""
    episode, sequence = qualifiers
    context, joined, statistic = shape
    assert _unit(context + joined.format(episode, length) + statistic, 1.0, high) == "{step}"
    assert _unit(context + joined.format(sequence, length) + statistic, 1.0, high) == "{token}"


def _flat(path: Path, key: str, values: list[float]) -> list[str]:
    lines = [{"step": step, key: value} for step, value in enumerate(values, 1)]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return [str(path)]


def _row(draft: Draft, key: str) -> DraftRow:
    (row,) = [row for f in draft.files for row in f.rows if row.logger_key == key]
    return row


@settings(max_examples=25, derandomize=True, deadline=None)
@given(
    _SCALED_NAMES.filter(lambda k: "(" not in k),
    st.lists(st.floats(0.02, 1.0), min_size=3, max_size=8),
)
def test_infer_never_changes_the_kind_when_values_are_scaled_by_100(
    tmp_path_factory: pytest.TempPathFactory, key: str, values: list[float]
) -> None:
    folder = tmp_path_factory.mktemp("scaled")
    share = _row(
        infer([_flat(folder / "a.jsonl", key, values)], EMPTY, input_format="flat-jsonl"), key
    )
    scaled_values = [v * 100 for v in values]
    scaled = _row(
        infer([_flat(folder / "b.jsonl", key, scaled_values)], EMPTY, input_format="flat-jsonl"),
        key,
    )
    assert (share.unit, scaled.unit) == ("1", "%")
    assert share.kind == scaled.kind


def test_infer_splits_a_family_whose_keys_write_different_units(tmp_path: Path) -> None:
    """Timers in seconds and their shares of the step in percent are no one family."""
    lines = [
        {
            "step": step,
            "worker_perf/time_gather (s)": 1.0 + step,
            "worker_perf/time_sync (s)": 2.0 + step,
            "worker_perf/pct_time_gather (%)": 10.0 + step,
            "worker_perf/pct_time_sync (%)": 20.0 + step,
        }
        for step in range(1, 6)
    ]
    path = tmp_path / "run.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    draft = infer([[str(path)]], EMPTY, input_format="flat-jsonl")
    rows = [row for f in draft.files for row in f.rows]
    units = {key: [r.unit for r in rows if _covers(r, key)] for key in lines[0] if key != "step"}
    assert units == {
        "worker_perf/time_gather (s)": ["s"],
        "worker_perf/time_sync (s)": ["s"],
        "worker_perf/pct_time_gather (%)": ["%"],
        "worker_perf/pct_time_sync (%)": ["%"],
    }


def _covers(row: DraftRow, key: str) -> bool:
    """Whether a drafted row's key (literal, or with placeholders) takes ``key``."""
    pattern, parts = row.logger_key.split("/"), key.split("/")
    return len(pattern) == len(parts) and all(
        p == k or (p.startswith("{") and p.endswith("}"))
        for p, k in zip(pattern, parts, strict=True)
    )


# --- a backend's step metric is a step axis ----------------------------------------------


def _wandb_run(root: Path, *, define: bool, steps: list[int]) -> list[str]:
    """A W&B run file (built byte for byte) logging ``learner_step`` beside two metrics,
    with ``define_metric("*", step_metric="learner_step")`` when ``define``."""
    axes = (metric(glob="*", step_metric="learner_step"),) if define else ()
    records = [
        history(
            index,
            item(("learner_step",), str(step)),
            item(("loss",), str(1.0 / (index + 1))),
            item(("grad_norm",), str(0.5 + index)),
        )
        for index, step in enumerate(steps)
    ]
    folder = root / "wandb" / "offline-run-20261207_000000-abc"
    folder.mkdir(parents=True)
    run_file = folder / "run-abc.wandb"
    run_file.write_bytes(container(*axes, *records))
    return [str(run_file)]


def test_infer_takes_a_wandb_step_metric_as_a_step_axis_whatever_its_name(
    tmp_path: Path,
) -> None:
    draft = infer([_wandb_run(tmp_path, define=True, steps=[1, 2, 3, 4, 5])], EMPTY)
    keys = {row.logger_key for f in draft.files for row in f.rows}
    assert "learner_step" not in keys
    assert {"loss", "grad_norm"} <= keys
    step_keys = {key for f in draft.files for found in f.step_keys.values() for key, _ in found}
    assert step_keys == {"learner_step"}


@pytest.mark.parametrize(
    ("define", "steps"),
    [
        (False, [1, 2, 3, 4, 5]),  # no definition: a key named like a count is a metric
        (True, [3, 2, 1, 4, 5]),  # defined, but going back: no step a run reaches
    ],
    ids=["undefined", "not-monotone"],
)
def test_infer_drafts_an_undefined_or_unsteplike_step_metric_as_a_metric(
    tmp_path: Path, define: bool, steps: list[int]
) -> None:
    draft = infer([_wandb_run(tmp_path, define=define, steps=steps)], EMPTY)
    keys = {row.logger_key for f in draft.files for row in f.rows}
    assert "learner_step" in keys


def test_infer_reads_presence_on_the_step_metric_over_a_key_named_like_a_step(
    tmp_path: Path,
) -> None:
    """A sample count ``global_step`` (512 a step) beside the defined step metric: a key
    logged every other step is ``every`` 2 on the step metric, not every 1024 samples."""
    records = []
    for index in range(1, 11):
        items = [
            item(("global_step",), str(512 * index)),
            item(("learner_step",), str(index)),
            item(("loss",), str(1.0 / index)),
        ]
        if index % 2 == 0:
            items.append(item(("eval_score",), str(0.05 * index)))
        records.append(history(index, *items))
    folder = tmp_path / "wandb" / "offline-run-20261207_000000-abc"
    folder.mkdir(parents=True)
    run_file = folder / "run-abc.wandb"
    run_file.write_bytes(container(metric(glob="*", step_metric="learner_step"), *records))
    rows = {row.logger_key: row for f in infer([[str(run_file)]], EMPTY).files for row in f.rows}
    assert (rows["eval_score"].requirement_level, rows["eval_score"].every) == ("required", 2)
    assert (rows["loss"].requirement_level, rows["loss"].every) == ("required", None)


# --- siblings whose values sum to 1 are shares of one whole -------------------------------

_CATEGORIES = ("answered_right", "bad_format", "answered_wrong")


def _parts(step: int, scale: float = 1.0) -> dict[str, float]:
    """Three categories' shares of a batch at ``step`` (summing to ``scale``)."""
    first, second = 0.1 + 0.05 * (step % 5), 0.2 + 0.02 * (step % 3)
    shares = (first, second, 1.0 - first - second)
    return {f"rollout/outcome/{c}": scale * v for c, v in zip(_CATEGORIES, shares, strict=True)}


def _outcome_units(tmp_path: Path, lines: list[dict[str, object]]) -> dict[str, str]:
    path = tmp_path / "run.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    draft = infer([[str(path)]], EMPTY, input_format="flat-jsonl")
    rows = [row for f in draft.files for row in f.rows]
    return {key: next(r.unit for r in rows if _covers(r, key)) for key in _parts(1)}


def test_infer_takes_siblings_summing_to_1_in_every_record_as_shares(tmp_path: Path) -> None:
    lines = [{"step": step, **_parts(step)} for step in range(1, 7)]
    assert set(_outcome_units(tmp_path, lines).values()) == {"1"}


@pytest.mark.parametrize(
    "lines",
    [
        # the values do not sum to 1
        [{"step": s, **_parts(s, scale=0.8)} for s in range(1, 7)],
        # they do, but in two records only: chance, not a whole
        [{"step": s, **_parts(s)} for s in range(1, 3)],
        # one record sums to more: no whole
        [{"step": s, **_parts(s, scale=1.0 if s != 4 else 1.3)} for s in range(1, 7)],
    ],
    ids=["not-one", "too-few-records", "one-record-off"],
)
def test_infer_takes_no_share_from_siblings_that_do_not_always_sum_to_1(
    tmp_path: Path, lines: list[dict[str, object]]
) -> None:
    assert set(_outcome_units(tmp_path, lines).values()) == {""}


@settings(max_examples=20, derandomize=True, deadline=None)
@given(
    st.lists(
        st.lists(st.floats(0.01, 1.0), min_size=2, max_size=4).map(
            lambda raw: [v / sum(raw) for v in raw]
        ),
        min_size=3,
        max_size=6,
    )
)
def test_infer_reads_any_partition_of_1_as_shares(
    tmp_path_factory: pytest.TempPathFactory, partitions: list[list[float]]
) -> None:
    """Whatever the parts and their number, siblings that sum to 1 each step are shares."""
    width = min(len(p) for p in partitions)
    lines: list[dict[str, object]] = []
    for step, parts in enumerate(partitions, 1):
        kept = [*parts[: width - 1], 1.0 - sum(parts[: width - 1])]
        lines.append({"step": step, **{f"split/part{i}": v for i, v in enumerate(kept)}})
    path = tmp_path_factory.mktemp("parts") / "run.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    draft = infer([[str(path)]], EMPTY, input_format="flat-jsonl")
    assert {row.unit for f in draft.files for row in f.rows} == {"1"}
