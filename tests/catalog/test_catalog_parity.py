"""The repository's catalog declares every series upstream NeMo-RL declares, as upstream does.

The table is upstream's 22 declared series (``metric_utils``, ``loss_functions``,
PPO, vLLM, SFT v2 and the fixed telemetry series): name, logger key, prefixes,
kind, unit and attributes. Upstream tees a row under ``train`` or ``""``.
"""

from __future__ import annotations

import pytest

from codegen.catalog.model import Catalog, MetricRow
from codegen.generate.resolve import resolve_catalog
from metric_catalog.series_rules import SeriesMatcher

TRAIN: tuple[str, ...] = ("train", "")
EFFICIENCY = "rl.efficiency.seconds"
CATEGORY = "rl.efficiency.category"
SETUP = "rl.setup.duration"

# (name, logger key, prefixes, kind, unit, attributes)
UPSTREAM: list[tuple[str, str | None, tuple[str, ...], str, str, tuple[str, ...]]] = [
    ("rl.reward.mean", "reward", TRAIN, "gauge", "", ()),
    ("rl.policy.loss", "loss", TRAIN, "gauge", "", ()),
    ("rl.grad_norm", "grad_norm", TRAIN, "gauge", "", ()),
    ("rl.learning_rate", "lr", TRAIN, "gauge", "", ()),
    ("rl.response.length.mean", "mean_gen_tokens_per_sample", TRAIN, "gauge", "{token}", ()),
    ("rl.kl.divergence", "kl_penalty", TRAIN, "gauge", "", ()),
    ("rl.entropy", "approx_entropy", TRAIN, "gauge", "", ()),
    ("rl.value.loss", "critic/loss", TRAIN, "gauge", "", ()),
    ("rl.vllm.prompt_tokens", "vllm/prompt_tokens", TRAIN, "counter", "{token}", ()),
    ("rl.vllm.generation_tokens", "vllm/generation_tokens", TRAIN, "counter", "{token}", ()),
    ("rl.vllm.prompt_length.mean", "vllm/prompt_length_mean", TRAIN, "gauge", "{token}", ()),
    (
        "rl.vllm.generation_length.mean",
        "vllm/generation_length_mean",
        TRAIN,
        "gauge",
        "{token}",
        (),
    ),
    ("rl.vllm.generations.ok", "vllm/generations_ok", TRAIN, "counter", "{generation}", ()),
    (
        "rl.vllm.generations.failed",
        "vllm/generations_failed",
        TRAIN,
        "counter",
        "{generation}",
        (),
    ),
    ("rl.vllm.batch.duration", None, (), "histogram", "s", ()),
    ("rl.sft_v2.loader.latency.max", "loader_latency_max", TRAIN, "gauge", "s", ()),
    ("rl.sft_v2.policy.duration", "policy_time", TRAIN, "gauge", "s", ()),
    ("rl.sft_v2.step.duration", "total_step_time", TRAIN, "gauge", "s", ()),
    (
        "rl.sft_v2.valid_tokens_per_second",
        "valid_tokens_per_second",
        TRAIN,
        "gauge",
        "{token}/s",
        (),
    ),
    (
        "rl.efficiency.seconds",
        "efficiency/{rl.efficiency.category}_s",
        TRAIN,
        "gauge",
        "s",
        (
            "rl.efficiency.category",
            "rl.efficiency.measurement",
            "rl.efficiency.window",
            "rl.bucket",
        ),
    ),
    (
        "rl.efficiency.pct",
        "efficiency/efficiency_pct",
        TRAIN,
        "gauge",
        "%",
        ("rl.efficiency.measurement", "rl.efficiency.window"),
    ),
    (
        "rl.setup.duration",
        "{rl.setup.phase}_time_s",
        ("timing/setup",),
        "gauge",
        "s",
        ("rl.setup.phase",),
    ),
]


@pytest.fixture(scope="module")
def rows(repo_catalog: Catalog) -> dict[str, MetricRow]:
    """The repository's catalog by series name."""
    return {row.name: row for _f, row in repo_catalog.rows()}


def test_the_table_holds_upstreams_22_series() -> None:
    """22 distinct upstream series, no more, no fewer."""
    assert len({entry[0] for entry in UPSTREAM}) == 22


@pytest.mark.parametrize("entry", UPSTREAM, ids=[entry[0] for entry in UPSTREAM])
def test_upstream_series_is_declared_as_upstream_declares_it(
    rows: dict[str, MetricRow],
    entry: tuple[str, str | None, tuple[str, ...], str, str, tuple[str, ...]],
) -> None:
    """Name, logger key, prefixes, kind, unit and attributes all match upstream."""
    name, key, prefixes, kind, unit, attributes = entry
    row = rows[name]
    assert (row.logger_key, row.prefixes, row.kind, row.unit) == (key, prefixes, kind, unit)
    assert row.attribute_names() == attributes


@pytest.mark.parametrize(
    ("prefix", "key", "name", "attributes"),
    [
        ("", "efficiency/idle/refit_bubble_s", EFFICIENCY, {CATEGORY: "idle/refit_bubble"}),
        ("train", "efficiency/init/total_s", EFFICIENCY, {CATEGORY: "init/total"}),
        ("timing/setup", "policy_init_time_s", SETUP, {"rl.setup.phase": "policy_init"}),
        ("validation-math", "loss", "rl.dpo.validation.loss", {"rl.dataset": "math"}),
        ("", "loss", "rl.policy.loss", {}),
        ("", "efficiency/total_waste_s", "rl.efficiency.waste", {}),
        ("train", "efficiency/productive_time_s", "rl.efficiency.productive", {}),
        ("", "efficiency/total_wall_time_s", "rl.efficiency.wall_time", {}),
        ("", "efficiency/thread_seconds_total_s", "rl.efficiency.thread_time", {}),
        ("", "efficiency/efficiency_pct_is_per_step", None, {}),
        ("", "efficiency/idle/refit_bubble_pct", None, {}),
        ("timing/setup", "parallel_init_enabled", None, {}),
        ("validation", "loss", None, {}),
    ],
)  # fmt: skip
def test_real_upstream_keys_match_exactly_one_row(
    repo_catalog: Catalog, prefix: str, key: str, name: str | None, attributes: dict[str, str]
) -> None:
    """Logged keys of real runs reach one series each, with the captured attributes."""
    captures = {a.name: a.capture for a in repo_catalog.attributes().values()}
    matcher = SeriesMatcher()
    for _f, row in repo_catalog.rows():
        for row_prefix in row.prefixes:
            matcher.add(row_prefix, row.logger_key or "", captures, row.name)
    matches = matcher.match(prefix, key)
    assert matches == ([] if name is None else [(name, attributes)])


def test_resolved_catalog_lists_every_shared_attribute(repo_catalog: Catalog) -> None:
    """The attributes of upstream's families are declared once, in catalog/attributes.yaml."""
    declared = resolve_catalog(repo_catalog)["attributes"]
    assert isinstance(declared, list)
    attributes = {a["name"]: a for a in declared}
    for name in ("rl.efficiency.category", "rl.bucket", "rl.setup.phase", "rl.dataset"):
        assert attributes[name]["file"] == "catalog/attributes.yaml"
    assert len(attributes["rl.efficiency.category"]["values"]) == 8


# Upstream derives three attributes of rl.efficiency.seconds from the category with fixed
# tables: efficiency_measurements() and efficiency_window() in telemetry/metrics.py (from
# WALL_CLOCK_/THREAD_ACCUMULATED_EFFICIENCY_CATEGORIES, COLLECTOR_LOOP_CATEGORIES and
# RUN_WINDOW_WALL_CLOCK_CATEGORIES) and EFFICIENCY_CATEGORY_BUCKET in instrumentation.py.
UPSTREAM_DERIVED: dict[str, dict[str, str]] = {
    "rl.efficiency.measurement": {
        "init/total": "wall_clock",
        "idle/buffer_starvation": "wall_clock",
        "idle/refit_bubble": "wall_clock",
        "idle/validation": "wall_clock",
        "idle/buffer_full_backoff": "thread_seconds",
        "idle/generation_limit_pause": "collector_wall_clock",
        "idle/refit_event_wait": "collector_wall_clock",
        "wasted/failed_trajectory": "thread_seconds",
    },
    "rl.efficiency.window": {
        "init/total": "run",
        "idle/buffer_starvation": "step",
        "idle/refit_bubble": "step",
        "idle/validation": "step",
        "idle/buffer_full_backoff": "run",
        "idle/generation_limit_pause": "run",
        "idle/refit_event_wait": "run",
        "wasted/failed_trajectory": "run",
    },
    "rl.bucket": {
        "init/total": "overhead",
        "idle/buffer_starvation": "idle",
        "idle/refit_bubble": "idle",
        "idle/validation": "idle",
        "idle/buffer_full_backoff": "idle",
        "idle/generation_limit_pause": "idle",
        "idle/refit_event_wait": "idle",
        "wasted/failed_trajectory": "wasted",
    },
}


@pytest.mark.parametrize("attribute", sorted(UPSTREAM_DERIVED))
def test_efficiency_attributes_are_derived_from_the_category_with_upstreams_table(
    repo_catalog: Catalog, rows: dict[str, MetricRow], attribute: str
) -> None:
    """Same table as upstream, covering every category, so the tee fills it on every point."""
    refs = {ref.name: ref for ref in rows[EFFICIENCY].attributes}
    derive = refs[attribute].derive
    assert derive is not None
    assert derive.source == CATEGORY
    assert derive.default is None
    assert dict(derive.table) == UPSTREAM_DERIVED[attribute]
    categories = repo_catalog.attributes()[CATEGORY].domain
    assert categories is not None
    assert set(categories) == set(UPSTREAM_DERIVED[attribute])
    assert refs[attribute].requirement_level == "required"


def test_the_pct_row_derives_nothing(rows: dict[str, MetricRow]) -> None:
    """Upstream picks the ratio's window from another key (efficiency_pct_is_per_step), which
    no placeholder captures; the divergence is documented, the row carries no derivation."""
    assert [ref.derive for ref in rows["rl.efficiency.pct"].attributes] == [None, None]
