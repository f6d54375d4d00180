"""Prefixes joined with '_' (Hugging Face's ``eval_``) and literal rows in a flat key's split.

A transformers ``Trainer`` logs one flat dict whose evaluation keys carry the prefix
glued with ``_`` (``eval_loss``, ``eval_<set>_loss``, ``train_runtime``), not ``/``. A
declared prefix that ends in ``_`` is joined to its key as written, so
``prefixes: ["", "{hf.split}_"]`` declares ``loss`` and ``eval_loss`` as one series, the
split captured. A flat key is then cut after such a ``_`` as well as at a ``/``, and
the tee (``adapters``) and live-check (``KeyMatcher.split``) cut it the same way.

Where a key could be cut into a literal row's pair and a family's (``train_loss``, a
literal row, against ``loss`` under ``{hf.split}_``), the literal row takes it, as a
literal key beats any family.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from opentelemetry.sdk.metrics.export import InMemoryMetricReader

from codegen.catalog.model import Catalog
from codegen.catalog.pipeline import load_and_check
from codegen.live_check import check_file
from codegen.live_check.checker import Checker
from metric_catalog import vocabulary
from metric_catalog.adapters import TrainerCallbackTee, split_key
from metric_catalog.series_rules import qualified_key, split_flat_key
from metric_catalog.vocabulary import MetricAttribute, TeedMetric
from tests.catalog_projects import loaded_catalog
from tests.otel_fixtures import caught_warnings, clean_otel, collect, installed_reader

__all__ = ["clean_otel"]  # fixture used by name

SPLIT = MetricAttribute("hf.split", values=("train", "eval"))
DATASET = MetricAttribute("hf.eval_dataset")
SPLIT_PREFIXES = ("{hf.split}_", "{hf.split}_{hf.eval_dataset}_")
ROWS = (
    TeedMetric(
        "loss",
        "rl.hf.loss",
        "gauge",
        "",
        "Loss",
        prefix="",
        other_prefixes=SPLIT_PREFIXES,
        attributes=(SPLIT, DATASET),
    ),
    TeedMetric("train_loss", "rl.hf.train.loss_average", "gauge", "", "Run loss", prefix=""),
    TeedMetric(
        "runtime",
        "rl.hf.runtime",
        "gauge",
        "s",
        "Runtime",
        prefix=SPLIT_PREFIXES[0],
        other_prefixes=SPLIT_PREFIXES[1:],
        attributes=(SPLIT, DATASET),
    ),
    TeedMetric(
        "reward_std",
        "rl.trl.reward.group_std",
        "gauge",
        "",
        "Reward std",
        prefix="",
        other_prefixes=("{hf.split}_",),
        attributes=(SPLIT,),
    ),
    TeedMetric("pg_loss", "rl.verl.actor.pg_loss", "gauge", "", "Policy loss", prefix="actor"),
    TeedMetric("step_", "rl.odd.step", "gauge", "", "A key ending in _", prefix="odd"),
)

CATALOG = """\
owner: transformers.trainer
module: trainer
description: The Trainer's own keys.
prefix: ""
attributes:
  - name: hf.split
    type: string
    description: Which pass a value comes from.
    values:
      - value: train
        description: The end-of-training summary.
      - value: eval
        description: An evaluation.
  - name: hf.eval_dataset
    type: string
    description: One evaluation set of a dict.
    max_cardinality: "8"
teed:
  - logger_key: loss
    prefixes: ["", "{hf.split}_", "{hf.split}_{hf.eval_dataset}_"]
    name: rl.hf.loss
    kind: gauge
    unit: ""
    description: Loss of the logging window, or over an evaluation set.
    attributes:
      - ref: hf.split
        requirement_level: recommended
      - ref: hf.eval_dataset
        requirement_level: recommended
  - logger_key: train_loss
    name: rl.hf.train.loss_average
    kind: gauge
    unit: ""
    description: Loss averaged over the whole run.
  - logger_key: reward_std
    prefixes: ["", "{hf.split}_"]
    name: rl.trl.reward.group_std
    kind: gauge
    unit: ""
    description: Reward spread within a group.
    attributes:
      - ref: hf.split
        requirement_level: recommended
  - logger_key: pg_loss
    prefix: actor
    name: rl.verl.actor.pg_loss
    kind: gauge
    unit: ""
    description: Policy loss of a verl-shaped key.
"""

# (logged flat key, its (prefix, key)): the tee and live-check agree on every one.
SPLITS = [
    ("loss", ("", "loss")),
    ("eval_loss", ("eval_", "loss")),
    ("eval_gsm8k_loss", ("eval_gsm8k_", "loss")),
    ("eval_math_500_loss", ("eval_math_500_", "loss")),
    ("train_loss", ("", "train_loss")),  # the literal row, not loss under train_
    ("eval_reward_std", ("eval_", "reward_std")),  # not reward_ + std
    ("reward_std", ("", "reward_std")),
    ("actor/pg_loss", ("actor", "pg_loss")),
    ("eval_/loss", ("", "eval_/loss")),  # a glued prefix is never cut at '/'
    ("test_loss", ("", "test_loss")),  # test is not a value of hf.split
    ("eval_", ("", "eval_")),
]


@pytest.fixture
def reader(clean_otel: None) -> Iterator[InMemoryMetricReader]:
    vocabulary.register_teed_metrics(ROWS)
    with installed_reader() as installed:
        yield installed


@pytest.fixture(scope="module")
def glued_prefix_catalog(tmp_path_factory: pytest.TempPathFactory) -> Catalog:
    """The Trainer's rows of :data:`CATALOG`, under prefixes glued to their keys (``eval_``)."""
    return loaded_catalog(tmp_path_factory.mktemp("glued"), CATALOG, "trainer.yaml")


@pytest.mark.parametrize(
    ("prefix", "key", "qualified"),
    [
        ("", "loss", "loss"),
        ("train", "loss", "train/loss"),
        ("eval_", "loss", "eval_loss"),
        ("eval_gsm8k_", "loss", "eval_gsm8k_loss"),
        ("{hf.split}_", "loss", "{hf.split}_loss"),
        ("timing/train", "x", "timing/train/x"),
    ],
)
def test_a_prefix_ending_in_an_underscore_is_joined_to_its_key_as_written(
    prefix: str, key: str, qualified: str
) -> None:
    assert qualified_key(prefix, key) == qualified


def test_a_literal_row_beats_a_family_whatever_the_cut() -> None:
    """``a/b/c``: the family takes it at the longest prefix unless a literal row names it."""
    families = {("a/b", "c"), ("a", "b/c")}
    routes = lambda prefix, rest: (prefix, rest) in families  # noqa: E731
    assert split_flat_key("a/b/c", routes) == ("a/b", "c")
    literal = lambda prefix, rest: (prefix, rest) == ("a", "b/c")  # noqa: E731
    assert split_flat_key("a/b/c", routes, literal) == ("a", "b/c")
    bare = lambda prefix, rest: (prefix, rest) == ("", "a/b/c")  # noqa: E731
    assert split_flat_key("a/b/c", routes, bare) == ("", "a/b/c")


def test_without_glued_prefixes_a_key_is_cut_at_slashes_only() -> None:
    routes = lambda prefix, rest: prefix in {"eval_", "eval"}  # noqa: E731
    assert split_flat_key("eval_loss", routes) == ("", "eval_loss")
    assert split_flat_key("eval_loss", routes, glued=lambda p: p == "eval_") == ("eval_", "loss")


@pytest.mark.parametrize(("logged", "expected"), SPLITS, ids=[k for k, _ in SPLITS])
def test_the_tee_and_live_check_split_a_flat_key_alike(
    reader: InMemoryMetricReader,
    glued_prefix_catalog: Catalog,
    logged: str,
    expected: tuple[str, str],
) -> None:
    assert split_key(logged) == expected
    assert Checker(glued_prefix_catalog, "run").matcher.split(logged) == expected


def test_a_trainer_callback_tees_eval_keys_to_the_same_series_with_the_split(
    reader: InMemoryMetricReader,
) -> None:
    TrainerCallbackTee().on_log(
        None,
        None,
        None,
        logs={
            "loss": 0.5,
            "eval_loss": 0.25,
            "eval_gsm8k_loss": 0.125,
            "train_loss": 0.75,
            "eval_runtime": 12.0,
            "train_runtime": 600.0,
        },
    )
    series = collect(reader)

    def points(name: str) -> dict[frozenset[tuple[str, object]], float]:
        return {frozenset(p.attributes.items()): p.value for p in series[name].points}

    assert points("rl.hf.loss") == {
        frozenset(): 0.5,
        frozenset({("hf.split", "eval")}): 0.25,
        frozenset({("hf.split", "eval"), ("hf.eval_dataset", "gsm8k")}): 0.125,
    }
    assert points("rl.hf.train.loss_average") == {frozenset(): 0.75}
    assert points("rl.hf.runtime") == {
        frozenset({("hf.split", "eval")}): 12.0,
        frozenset({("hf.split", "train")}): 600.0,
    }


def test_a_placeholder_of_some_prefixes_only_is_not_required_of_every_point(
    glued_prefix_catalog: Catalog, tmp_path: Path
) -> None:
    """``hf.split`` of ``["", "{hf.split}_"]``: training points carry none, so it may be
    ``recommended`` (written, or by default); of every prefix, it must be ``required``."""
    (row,) = [
        row for _file, row in glued_prefix_catalog.rows() if row.name == "rl.trl.reward.group_std"
    ]
    assert [(ref.name, ref.requirement_level) for ref in row.attributes] == [
        ("hf.split", "recommended")
    ]
    (tmp_path / "catalog").mkdir()
    written = "      - ref: hf.split\n        requirement_level: recommended\n    description"
    unwritten = CATALOG.replace(
        "    attributes:\n      - ref: hf.split\n        requirement_level: recommended\n"
        "  - logger_key: pg_loss",
        "    attributes:\n      - ref: hf.split\n  - logger_key: pg_loss",
    )
    assert unwritten != CATALOG
    assert written not in unwritten
    (tmp_path / "catalog" / "trainer.yaml").write_text(unwritten, encoding="utf-8")
    result = load_and_check(root=tmp_path, lint=False)
    assert result.ok, [str(d) for d in result.diagnostics]
    assert result.catalog is not None
    (row,) = [r for _f, r in result.catalog.rows() if r.name == "rl.trl.reward.group_std"]
    assert [(ref.name, ref.requirement_level) for ref in row.attributes] == [
        ("hf.split", "recommended")
    ]
    everywhere = CATALOG.replace('prefixes: ["", "{hf.split}_"]', 'prefixes: ["{hf.split}_"]')
    (tmp_path / "catalog" / "trainer.yaml").write_text(everywhere, encoding="utf-8")
    result = load_and_check(root=tmp_path, lint=False)
    assert [d.code for d in result.diagnostics] == ["PLACEHOLDER_NOT_REQUIRED"]


def test_live_check_reads_glued_keys_of_a_flat_log_cleanly(
    glued_prefix_catalog: Catalog, tmp_path: Path
) -> None:
    log = tmp_path / "run.jsonl"
    log.write_text(
        '{"step": 1, "loss": 0.5, "reward_std": 0.1, "actor/pg_loss": 0.2}\n'
        '{"step": 2, "eval_loss": 0.4, "eval_gsm8k_loss": 0.3, "eval_reward_std": 0.2}\n'
        '{"step": 2, "train_loss": 0.45, "eval_made_up": 1.0}\n',
        encoding="utf-8",
    )
    report = check_file(str(log), glued_prefix_catalog)
    assert [(f.kind, f.qualified_key) for f in report.findings] == [("undeclared", "eval_made_up")]
    assert {r.row.name: r.logged for r in report.rows if r.logged} == {
        "rl.hf.loss": 3,
        "rl.hf.train.loss_average": 1,
        "rl.trl.reward.group_std": 2,
        "rl.verl.actor.pg_loss": 1,
    }


def test_the_prefixes_a_split_only_tries_cost_no_attribute_budget(clean_otel: None) -> None:
    """``eval_math_500_steps_per_second`` tries ``eval_math_500_steps_per_``, ``eval_math_``...:
    none of those datasets may count against ``hf.eval_dataset``'s budget of 2 values, or
    the two real sets overflow (a warning, and points on the overflow point)."""
    budgeted = MetricAttribute("hf.eval_dataset", max_cardinality=2)
    vocabulary.register_teed_metrics(
        [
            TeedMetric(
                key,
                f"rl.hf.{key}",
                "gauge",
                "",
                key,
                prefix="{hf.split}_{hf.eval_dataset}_",
                attributes=(SPLIT, budgeted),
            )
            for key in ("runtime", "samples_per_second", "steps_per_second", "loss")
        ]
    )
    logs = {
        f"eval_{name}_{key}": 1.0
        for name in ("gsm8k", "math_500")
        for key in ("runtime", "samples_per_second", "steps_per_second", "loss")
    }
    with installed_reader() as reader, caught_warnings() as caught:
        TrainerCallbackTee().on_log(None, None, None, logs=logs)
        series = collect(reader)
    assert caught.messages == []
    for key in ("runtime", "samples_per_second", "steps_per_second", "loss"):
        assert {frozenset(point.attributes.items()) for point in series[f"rl.hf.{key}"].points} == {
            frozenset({("hf.split", "eval"), ("hf.eval_dataset", "gsm8k")}),
            frozenset({("hf.split", "eval"), ("hf.eval_dataset", "math_500")}),
        }
