"""Each lint rule fires on its bad case and stays silent on a good one; ``no_lint`` works."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from codegen.catalog.diagnostics import Position, Severity
from codegen.catalog.lints import META_RULES, RULES, lint_catalog, lint_row
from codegen.catalog.model import Catalog, CatalogFile, MetricRow
from codegen.catalog.words import share_word
from metric_catalog.value_rules import ValueRange


def make_row(**fields: Any) -> MetricRow:
    """A clean teed row with ``fields`` overridden."""
    values: dict[str, Any] = {
        "section": "teed",
        "name": "rl.reward.mean",
        "kind": "gauge",
        "unit": "1",
        "description": "Mean rollout reward over the batch.",
        "stability": "development",
        "position": Position("catalog/grpo.yaml", 6, 5),
        "logger_key": "reward",
        "prefix": "train",
        "positions": {
            "logger_key": Position("catalog/grpo.yaml", 6, 17),
            "name": Position("catalog/grpo.yaml", 7, 11),
            "unit": Position("catalog/grpo.yaml", 9, 11),
            "description": Position("catalog/grpo.yaml", 10, 18),
            "no_lint": Position("catalog/grpo.yaml", 11, 14),
            "no_lint[0]": Position("catalog/grpo.yaml", 11, 15),
            "no_lint[1]": Position("catalog/grpo.yaml", 11, 30),
        },
    }
    values.update(fields)
    return MetricRow(**values)


def codes(row: MetricRow) -> list[str]:
    """Codes of the lint findings for ``row``."""
    return [d.code for d in lint_row(row)]


# rule, fields that make it fire, fields of a near miss that must not fire
CASES: list[tuple[str, dict[str, Any], dict[str, Any]]] = [
    ("NAME_SYNTAX", {"name": "rl.Reward.mean"}, {"name": "rl.reward.mean"}),
    ("NAME_SYNTAX", {"name": "rl.reward__mean"}, {"name": "rl.reward_mean"}),
    ("NAME_SYNTAX", {"name": "rl._reward"}, {"name": "rl.reward.p99"}),
    ("NAME_SYNTAX", {"name": "rl.reward.mean_"}, {"name": "rl.reward.mean_x"}),
    ("LOGGER_KEY_REPEATS_PREFIX", {"logger_key": "train/reward"}, {"logger_key": "reward"}),
    (
        "LOGGER_KEY_REPEATS_PREFIX",
        {"logger_key": "train/reward"},
        {"logger_key": "training/reward"},
    ),
    (
        "LOGGER_KEY_REPEATS_PREFIX",
        {"logger_key": "timing/train/step", "prefix": "timing/train"},
        {"logger_key": "step/total", "prefix": "timing/train"},
    ),
    (
        "LOGGER_KEY_REPEATS_PREFIX",
        {"logger_key": "train/step", "prefix": "timing/train"},
        {"logger_key": "timing/step", "prefix": "timing/train"},
    ),
    (
        "LOGGER_KEY_REPEATS_PREFIX",
        {"logger_key": "train/reward", "prefix": "", "other_prefixes": ("train",)},
        {"logger_key": "train/reward", "prefix": "", "other_prefixes": ("validation",)},
    ),
    (
        "LOGGER_KEY_REPEATS_PREFIX",
        {"logger_key": "validation/reward", "prefix": "validation"},
        {"logger_key": "train", "prefix": "train"},
    ),
    (
        "LOGGER_KEY_BACKEND_UNSAFE",
        {"logger_key": "val-core/gsm8k/acc/mean@4"},
        {"logger_key": "val-core/gsm8k/acc/mean_at_4"},
    ),
    ("LOGGER_KEY_BACKEND_UNSAFE", {"logger_key": "timing s"}, {"logger_key": "timing.s"}),
    ("UNIT_NOT_UCUM", {"unit": "msec"}, {"unit": "ms"}),
    ("UNIT_NOT_UCUM", {"unit": "sec"}, {"unit": "s", "logged_unit": "ms"}),
    ("UNIT_NOT_UCUM", {"unit": "GiB"}, {"unit": "By", "logged_unit": "GiBy"}),
    ("UNIT_NOT_UCUM", {"unit": "KBy"}, {"unit": "kBy"}),
    ("UNIT_NOT_UCUM", {"unit": "tokens"}, {"unit": "s/{token}", "logged_unit": "ms/{token}"}),
    ("UNIT_NOT_UCUM", {"unit": "sec"}, {"unit": "1"}),
    ("UNIT_NOT_UCUM", {"unit": "MiB"}, {"unit": "MiBy"}),
    ("UNIT_NOT_UCUM", {"unit": "bytes"}, {"unit": "By/s"}),
    ("UNIT_NOT_UCUM", {"unit": "percent"}, {"unit": "%"}),
    ("UNIT_NOT_UCUM", {"unit": "pct"}, {"unit": ""}),
    ("UNIT_NOT_UCUM", {"unit": "tokens/s"}, {"unit": "{token}"}),
    ("UNIT_ANNOTATION_PLURAL", {"unit": "{tokens}"}, {"unit": "{token}"}),
    ("UNIT_ANNOTATION_PLURAL", {"unit": "{samples}/s"}, {"unit": "{status}"}),
    ("UNIT_IN_NAME", {"name": "rl.step.time_ms"}, {"name": "rl.step.time"}),
    ("UNIT_IN_NAME", {"name": "rl.gpu.memory_bytes"}, {"name": "rl.gpu.memory"}),
    ("UNIT_IN_NAME", {"name": "rl.throughput.tokens_per_sec"}, {"name": "rl.reward.min"}),
    ("UNIT_IN_NAME", {"name": "rl.tokens_per_second.x"}, {"name": "rl.second_stage.loss"}),
    ("UNIT_IN_NAME", {"name": "rl.wait.second"}, {"name": "rl.second.loss"}),
    ("COUNTER_SUFFIX", {"kind": "counter", "name": "rl.tokens.total"}, {"kind": "counter"}),
    ("COUNTER_SUFFIX", {"kind": "counter", "name": "rl.tokens_count"}, {"kind": "counter"}),
    ("RESERVED_SUFFIX", {"name": "rl.reward.sum"}, {"name": "rl.reward.summed"}),
    ("RESERVED_SUFFIX", {"name": "rl.tokens_total"}, {"name": "rl.totals.tokens"}),
    ("TYPE_IN_NAME", {"name": "rl.reward.gauge"}, {"name": "rl.reward.gauged"}),
    ("TYPE_IN_NAME", {"name": "rl.step_counter"}, {"name": "rl.step.index"}),
    ("DESCRIPTION_MISSING", {"description": "  "}, {"description": "Reward."}),
    (
        "DESCRIPTION_TODO",
        {"description": "TODO: say what this measures."},
        {"description": "Todo items the agent finished."},
    ),
    ("DESCRIPTION_FORMAT", {"description": "mean reward."}, {"description": "Mean reward."}),
    ("DESCRIPTION_FORMAT", {"description": "Mean reward"}, {"description": "99th percentile."}),
    (
        "DESCRIPTION_REPEATS_NAME",
        {"description": "Reward mean."},
        {"description": "Mean reward of the batch's rollouts."},
    ),
    (
        "DURATION_UNIT",
        {"name": "rl.step.duration", "unit": "1"},
        {"name": "rl.step.duration", "unit": "s"},
    ),
    (
        "DURATION_UNIT",
        {"name": "rl.step.time", "kind": "histogram", "unit": "1"},
        {"name": "rl.step.time", "kind": "gauge", "unit": "1"},
    ),
    ("RATIO_UNIT", {"name": "rl.gpu.utilization", "unit": "{gpu}"}, {"name": "rl.gpu.utilization"}),
    # the unit is what the code logs: a utilization logged in percent is no finding
    (
        "RATIO_UNIT",
        {"name": "rl.gpu.utilization", "unit": "s"},
        {"name": "rl.gpu.utilization", "unit": "%"},
    ),
    ("RANGE_SUGGESTED", {"name": "rl.clip_fraction"}, {"name": "rl.clip_fractions"}),
    (
        "RANGE_SUGGESTED",
        {"name": "rl.response.stop_rate"},
        {"name": "rl.response.stop_rate", "declared_range": ValueRange(0.0, 1.0)},
    ),
    # an importance ratio is a quotient: range {} (or {min: "0"}) says so and silences it
    (
        "RANGE_SUGGESTED",
        {"name": "rl.policy.importance_ratio"},
        {"name": "rl.policy.importance_ratio", "declared_range": ValueRange()},
    ),
    # a ratio logged in percent has its unit's default range; a learning rate is no share
    ("RANGE_SUGGESTED", {"name": "rl.mfu.ratio"}, {"name": "rl.mfu.ratio", "unit": "%"}),
    ("RANGE_SUGGESTED", {"name": "rl.eval.rate"}, {"name": "rl.learning_rate"}),
    # the shared table (codegen.catalog.words.SHARE_WORDS) knows utilizations and accuracies
    ("RANGE_SUGGESTED", {"name": "rl.perf.mfu"}, {"name": "rl.perf.mfu", "unit": "%"}),
    ("RANGE_SUGGESTED", {"name": "rl.actor.clip_frac"}, {"name": "rl.actor.clip_count"}),
    ("RANGE_SUGGESTED", {"name": "rl.eval.accuracy"}, {"name": "rl.eval.score"}),
]


@pytest.mark.parametrize(("code", "bad", "good"), CASES)
def test_rule_fires_on_bad_and_not_on_good(
    code: str, bad: dict[str, Any], good: dict[str, Any]
) -> None:
    """The rule reports the bad row (at its field) and is silent on the near miss."""
    found = [d for d in lint_row(make_row(**bad)) if d.code == code]
    assert len(found) == 1
    assert found[0].severity is RULES[code].severity
    assert found[0].position == make_row().where(RULES[code].field)
    assert code not in codes(make_row(**good))


def test_every_rule_has_a_case() -> None:
    """No rule goes untested by the table above."""
    assert {code for code, _bad, _good in CASES} == set(RULES)


def test_clean_row_has_no_findings() -> None:
    """The reference row is lint-clean."""
    assert lint_row(make_row()) == []


@pytest.mark.parametrize("code", sorted(RULES))
def test_rules_have_stable_screaming_names_and_docstrings(code: str) -> None:
    """Codes are SCREAMING_SNAKE_CASE; every rule explains itself in one line."""
    assert code.isupper()
    assert code.replace("_", "").isalpha()
    assert RULES[code].summary


def test_no_lint_silences_a_firing_rule() -> None:
    """A rule named in ``no_lint`` that fires is silenced, with no meta warning."""
    row = make_row(name="rl.step.time_ms", unit="s", no_lint=("UNIT_IN_NAME",))
    assert codes(row) == []


def test_unused_no_lint_is_a_warning_at_the_entry() -> None:
    """Silencing a rule that does not fire is reported where the entry is written."""
    (finding,) = lint_row(make_row(no_lint=("UNIT_IN_NAME",)))
    assert finding.code == "UNUSED_NO_LINT"
    assert finding.severity is Severity.WARNING
    assert finding.position == Position("catalog/grpo.yaml", 11, 15)


def test_unknown_lint_suggests_the_closest_rule() -> None:
    """A misspelt rule name is a warning that names the rule meant."""
    (finding,) = lint_row(make_row(no_lint=("UNIT_IN_NAM",)))
    assert finding.code == "UNKNOWN_LINT"
    assert "did you mean 'UNIT_IN_NAME'?" in finding.message
    assert finding.severity is META_RULES["UNKNOWN_LINT"]


def test_meta_rules_cannot_be_silenced() -> None:
    """``no_lint: [UNUSED_NO_LINT]`` is itself unknown: stale suppressions always show."""
    assert codes(make_row(no_lint=("UNUSED_NO_LINT",))) == ["UNKNOWN_LINT"]


def test_messages_name_the_fix() -> None:
    """Messages say what is wrong, then what to write instead."""
    (finding,) = lint_row(make_row(unit="msec"))
    assert "write 'ms'" in finding.message


def test_lint_catalog_covers_every_row() -> None:
    """Linting a catalog lints each row of each file."""
    rows = (make_row(unit="msec"), make_row(name="rl.reward.gauge", logger_key="r2"))
    catalog = Catalog(
        (CatalogFile("catalog/grpo.yaml", "nemo_rl.grpo", "grpo", "GRPO metrics.", rows, ()),)
    )
    assert sorted(d.code for d in lint_catalog(catalog)) == ["TYPE_IN_NAME", "UNIT_NOT_UCUM"]


def test_logger_key_repeating_its_prefix_names_the_doubled_key_and_the_fix() -> None:
    """``train/approx_entropy`` under ``train`` is logged as ``train/train/...``: say so."""
    (finding,) = lint_row(make_row(logger_key="train/approx_entropy"))
    assert finding.code == "LOGGER_KEY_REPEATS_PREFIX"
    assert finding.position == Position("catalog/grpo.yaml", 6, 17)
    assert "'train/train/approx_entropy'" in finding.message
    assert "'logger_key: approx_entropy'" in finding.message


def test_recorded_rows_and_empty_prefixes_never_repeat_a_prefix() -> None:
    """No logger key or no prefix: nothing can be doubled."""
    assert "LOGGER_KEY_REPEATS_PREFIX" not in codes(
        make_row(section="recorded", logger_key=None, prefix=None)
    )
    assert "LOGGER_KEY_REPEATS_PREFIX" not in codes(make_row(logger_key="train/x", prefix=""))


@pytest.mark.parametrize(
    ("name", "suggestion"),
    [
        ("rl.policyEntropy", "rl.policy_entropy"),
        ("rl.Reward.mean", "rl.reward.mean"),
        ("rl.gpuMemory.peakBytes2", "rl.gpu_memory.peak_bytes2"),
        ("rl.HTTPServer.latency", "rl.http_server.latency"),
        ("rl.kvCache.usage__ratio", "rl.kv_cache.usage_ratio"),
        ("rl.reward__mean", "rl.reward_mean"),
    ],
)
def test_name_syntax_suggests_snake_case_at_camel_case_boundaries(
    name: str, suggestion: str
) -> None:
    """camelCase words get an underscore, not a squashed lowercase (``policyentropy``)."""
    (finding,) = [d for d in lint_row(make_row(name=name)) if d.code == "NAME_SYNTAX"]
    assert f"write it as {suggestion!r}" in finding.message


_WORDS = st.from_regex(r"[a-z][a-z0-9]{0,6}", fullmatch=True)
_CAMEL = st.lists(_WORDS, min_size=1, max_size=4).map(
    lambda words: words[0] + "".join(w[:1].upper() + w[1:] for w in words[1:])
)


@given(st.lists(_CAMEL, min_size=1, max_size=4))
def test_name_syntax_suggestion_is_itself_a_valid_name(components: list[str]) -> None:
    """Whatever camelCase a name uses, the suggested spelling passes NAME_SYNTAX."""
    name = "rl." + ".".join(components)
    found = [d for d in lint_row(make_row(name=name)) if d.code == "NAME_SYNTAX"]
    if not found:
        return
    suggestion = found[0].message.rsplit("write it as ", 1)[1].rstrip(".").strip("'")
    assert "NAME_SYNTAX" not in codes(make_row(name=suggestion))
    assert suggestion.replace("_", "") == name.lower().replace("_", "")


def _suggested_count(unit: str) -> str | None:
    """The braced count UNIT_NOT_UCUM suggests for ``unit`` (``None``: it names a fix instead)."""
    found = [d for d in lint_row(make_row(unit=unit)) if d.code == "UNIT_NOT_UCUM"]
    assert found, f"{unit!r} should be refused"
    _head, sep, rest = found[0].message.partition("a braced count such as '")
    return rest[: rest.rindex("'")] if sep else None


@pytest.mark.parametrize(
    ("unit", "count"),
    [
        ("T{FLOP}/s", "{tflop}"),  # torchtitan's tflops: a prefix on an annotation
        ("{tok}s", "{tok}"),
        ("samples", "{sample}"),
        ("k{token}", "{ktoken}"),
    ],
)
def test_unit_not_ucum_suggests_a_count_without_nested_braces(unit: str, count: str) -> None:
    """A term holding braces is suggested as one flat count, not '{t{flop}}' (not UCUM)."""
    assert _suggested_count(unit) == count


@pytest.mark.parametrize(
    ("unit", "power"),
    [
        ("T{FLOP}/s", "'10*12{FLOP}'"),
        ("k{token}", "'10*3{token}'"),
        ("G{sample}/s", "'10*9{sample}'"),
    ],
)
def test_unit_not_ucum_suggests_a_power_of_ten_for_a_prefixed_annotation(
    unit: str, power: str
) -> None:
    """UCUM prefixes no annotation: the fix for 'T{FLOP}' is the power of ten '10*12{FLOP}'."""
    (found,) = [d for d in lint_row(make_row(unit=unit)) if d.code == "UNIT_NOT_UCUM"]
    assert power in found.message
    assert "UNIT_NOT_UCUM" not in codes(make_row(unit=power.strip("'")))


@pytest.mark.parametrize("unit", ["10*12{FLOP}/s", "10^12{FLOP}/s", "10*-3{token}", "10*6"])
def test_a_power_of_ten_unit_is_ucum(unit: str) -> None:
    """``10*12{FLOP}/s`` is UCUM (a power of ten, then an annotation): no unit finding."""
    assert [c for c in codes(make_row(unit=unit)) if c.startswith("UNIT")] == []


@pytest.mark.parametrize("unit", ["10*19{FLOP}", "10*0", "10*-19", "10*12{a}{b}"])
def test_a_power_of_ten_the_tee_cannot_scale_exactly_is_refused(unit: str) -> None:
    """Beyond 10*18 (or 10*0, or two annotations) the message names the powers allowed."""
    (found,) = [d for d in lint_row(make_row(unit=unit)) if d.code == "UNIT_NOT_UCUM"]
    assert "from 10*-18 to 10*18" in found.message


def test_a_plural_annotation_after_a_power_of_ten_is_warned() -> None:
    assert "UNIT_ANNOTATION_PLURAL" in codes(make_row(unit="10*12{FLOPs}/s"))


_UNIT_TERMS = st.from_regex(r"[A-Za-z{}]{1,8}", fullmatch=True)


@given(_UNIT_TERMS)
def test_unit_not_ucum_suggestion_is_itself_a_valid_unit(term: str) -> None:
    """Whatever term a unit holds, the braced count the message suggests passes UNIT_NOT_UCUM."""
    found = [d for d in lint_row(make_row(unit=term)) if d.code == "UNIT_NOT_UCUM"]
    if not found or "a braced count such as '" not in found[0].message:
        return
    suggestion = _suggested_count(term)
    assert suggestion is not None
    assert "UNIT_NOT_UCUM" not in codes(make_row(unit=suggestion))


@pytest.mark.parametrize(
    ("words", "quotients", "share"),
    [
        (("perf", "mfu"), True, "mfu"),
        (("actor", "clip", "frac"), True, "frac"),
        (("eval", "accuracy", "mean"), True, "accuracy"),
        (("response", "stop", "rate"), True, "rate"),
        (("optim", "learning", "rate"), True, None),
        (("policy", "importance", "ratio"), True, "ratio"),
        (("policy", "importance", "ratio"), False, None),
        (("ratio", "of", "something", "else"), True, None),
        ((), True, None),
    ],
)
def test_share_word_reads_the_last_two_words_of_a_name(
    words: tuple[str, ...], quotients: bool, share: str | None
) -> None:
    assert share_word(words, quotients=quotients) == share
