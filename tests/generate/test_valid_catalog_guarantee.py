"""A catalog that validates never breaks generate, import, registration or the tee (#36, #37).

For any catalog ``validate`` accepts (its load, schema and cross-file checks plus the
generated-name check), ``generate`` renders every output, every generated module imports
with a fresh registry (registering its rows and step keys), the names each module binds
are the ones it declares, the tee never raises on any dict a loop may hand it, and every
output parses (Python compiles, JSON loads without ``NaN``/``Infinity``, YAML loads;
``promtool check rules`` accepts the rules where ``promtool`` is on PATH). Where the tool
cannot support a form, validate refuses it: the property only ever reaches the checks
below through a catalog that validated.

The examples are drawn with a fixed seed (``derandomize=True``) and a bounded count, so
the property runs in ``make test`` in a few seconds.
"""

from __future__ import annotations

import copy
import json
import math
import shutil
import subprocess
import tempfile
import warnings
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, Phase, event, given, settings
from hypothesis import strategies as st
from opentelemetry.sdk.metrics.export import InMemoryMetricReader

from codegen.catalog.model import Catalog, MetricRow
from codegen.catalog.pipeline import load_and_check
from codegen.config import Config
from codegen.generate import wandb
from codegen.generate.plan import generation_diagnostics, render_all
from metric_catalog import exporters, identity, vocabulary
from metric_catalog.adapters import tee_flat
from metric_catalog.series_rules import Placeholder, parse_pattern, qualified_key
from metric_catalog.tee import record_metrics, tee_metrics
from metric_catalog.vocabulary import RecordedMetric, TeedMetric
from tests.otel_fixtures import installed_reader

# --- the pipeline a valid catalog goes through ----------------------------------------


def checked(root: Path) -> Catalog | None:
    """The catalog under ``root`` when ``validate`` accepts it (else ``None``); never raises."""
    result = load_and_check(root=root, lint=False)
    if not result.ok or generation_diagnostics(result.catalog):
        return None
    return result.catalog


def _no_constant(text: str) -> float:
    msg = f"{text} is no JSON number"
    raise ValueError(msg)


def parse_outputs(plan: Mapping[str, str]) -> None:
    """Every output parses: JSON (strictly: no NaN or Infinity) and YAML load."""
    for path, text in plan.items():
        if path.endswith(".json"):
            json.loads(text, parse_constant=_no_constant)
        elif path.endswith((".yaml", ".yml")):
            yaml.safe_load(text)


@contextmanager
def fresh_runtime() -> Iterator[InMemoryMetricReader]:
    """An empty registry and exporter state, an in-memory OTel reader, warnings muted."""
    vocabulary._reset_for_tests()
    identity._reset_for_tests()
    exporters.reset_for_tests()
    try:
        with warnings.catch_warnings(), installed_reader() as reader:
            warnings.simplefilter("ignore")
            yield reader
    finally:
        exporters.reset_for_tests()
        identity._reset_for_tests()
        vocabulary._reset_for_tests()


def imported(plan: Mapping[str, str], config: Config) -> dict[str, dict[str, Any]]:
    """Module name -> namespace of every generated Python module, owners before W&B's."""
    modules = {
        path.removeprefix(f"{config.package_dir}/").removesuffix(".py"): text
        for path, text in plan.items()
        if path.startswith(f"{config.package_dir}/") and path.endswith(".py")
    }
    # The W&B definitions import nothing generated; the owners' modules first anyway.
    order = sorted(modules, key=lambda name: (name == wandb.MODULE, name))
    namespaces: dict[str, dict[str, Any]] = {}
    for name in order:
        namespace: dict[str, Any] = {"__name__": f"{config.package}.{name}"}
        exec(compile(modules[name], f"{name}.py", "exec"), namespace)
        namespaces[name] = namespace
    return namespaces


def assert_names_bound_as_declared(catalog: Catalog, namespaces: dict[str, dict[str, Any]]) -> None:
    """No generated name replaced another: each row's constant holds that row, each loop's
    tuple is the one ``LOOPS`` names, ``define_loop`` and ``define_metrics`` are functions."""
    for catalog_file in catalog.files:
        namespace = namespaces[catalog_file.module]
        for row in catalog_file.rows:
            bound = namespace[row.constant_name]
            assert isinstance(bound, TeedMetric | RecordedMetric)
            assert bound.name == row.name
            assert (bound.namespace, bound.key) == (row.namespace, row.registry_key)
        assert set(namespace["__all__"]) <= set(namespace)
    if wandb.generated_names(catalog):  # the catalog has teed rows: the module is W&B's
        definitions = namespaces[wandb.MODULE]
        assert callable(definitions["define_loop"])
        assert callable(definitions["define_metrics"])
        for loop in catalog.loops():
            assert definitions["LOOPS"][loop.name] is definitions[loop.name.upper()]
            assert callable(definitions[f"define_{loop.name}"])


class _Run:
    def define_metric(self, name: str, **options: Any) -> None:
        del name, options


HOSTILE_VALUES: tuple[object, ...] = (
    0.5,
    -3,
    math.nan,
    math.inf,
    -math.inf,
    10**400,
    -(10**400),
    1e308,
    True,
    "1.5",
    "not a number",
    None,
    {"nested": {"deeper": 1.0}},
    [1.0, 2.0],
    b"bytes",
    object(),
)
"""What a training loop may hand the tee under a declared key (or any key)."""


def _sample(text: str, row: MetricRow, catalog: Catalog) -> str:
    """``text`` (a key or prefix pattern) with each placeholder filled by a value its
    attribute takes (an enum's first value, ``3`` for an open int, ``v`` else)."""
    attributes = catalog.attributes()
    out = []
    for part in parse_pattern(text):
        if isinstance(part, str):
            out.append(part)
            continue
        attribute = attributes.get(part.name)
        if attribute is not None and attribute.values:
            out.append(attribute.values[0].value)
        elif attribute is not None and attribute.type == "int":
            out.append("3")
        else:
            out.append("v")
    return "".join(out)


def tee_everything(catalog: Catalog, values: list[object]) -> None:
    """Hand the tee every key the catalog declares (and hostile keys), with hostile values,
    the ways a loop does: per prefix, flat, per loop, and recorded directly."""
    by_prefix: dict[str, dict[object, object]] = {}
    flat: dict[object, object] = {1: 1.0, None: 2.0, ("tuple",): 3.0, "": 4.0, "a/": 5.0}
    index = 0
    for _f, row in catalog.rows():
        value = values[index % len(values)]
        index += 1
        if row.logger_key is None:
            record_metrics({row.registry_key: value})
            continue
        key = _sample(row.logger_key, row, catalog)
        for prefix in row.prefixes:
            written = _sample(prefix, row, catalog)
            by_prefix.setdefault(written, {})[key] = value
            flat[qualified_key(written, key)] = value
    for loop in catalog.loops():
        for step in loop.step_keys:
            flat[step.key] = values[index % len(values)]
            index += 1
    loops: list[str | None] = [None, *(loop.name for loop in catalog.loops()), "undeclared"]
    for loop in loops:
        for prefix, metrics in by_prefix.items():
            tee_metrics(metrics, prefix, loop=loop)  # type: ignore[arg-type]
        tee_flat(flat, loop=loop)  # type: ignore[arg-type]
    tee_metrics({"x": 1.0}, "\x00\n{", attributes={"k": object()})  # type: ignore[dict-item]


def run_pipeline(root: Path, values: list[object]) -> Catalog | None:
    """Validate, render, parse, import, register and tee the catalog under ``root``; the
    catalog when it validated, else ``None`` (nothing else was tried)."""
    catalog = checked(root)
    if catalog is None:
        return None
    config = Config(root=root)
    plan = render_all(catalog, config)
    parse_outputs(plan)
    with fresh_runtime():
        namespaces = imported(plan, config)
        assert_names_bound_as_declared(catalog, namespaces)
        if wandb.generated_names(catalog):
            for loop in namespaces[wandb.MODULE]["LOOPS"]:
                namespaces[wandb.MODULE]["define_loop"](_Run(), loop)
        tee_everything(catalog, values)
    return catalog


def write(root: Path, files: Mapping[str, object]) -> Path:
    """``root`` holding ``catalog/<name>`` for each file's data (dumped as YAML)."""
    folder = root / "catalog"
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    for name, data in files.items():
        text = yaml.safe_dump(data, sort_keys=False, allow_unicode=True)
        (folder / name).write_text(text, encoding="utf-8")
    return root


# --- the findings, one catalog each ---------------------------------------------------


def _row(logger_key: str, name: str, **fields: object) -> dict[str, object]:
    return {
        "logger_key": logger_key,
        "name": name,
        "kind": "gauge",
        "unit": "s",
        "description": "Wall clock of the step.",
        **fields,
    }


DOMAIN = {"name": "rl.domain", "type": "string", "description": "Domain.", "max_cardinality": "8"}


@pytest.mark.parametrize(
    "data",
    [
        pytest.param(
            {
                "owner": "rl.scheduler",
                "module": "scheduler",
                "description": "Schedulers.",
                "prefix": "",
                "attributes": [DOMAIN],
                "teed": [
                    _row(
                        "{rl.domain}/scheduler/{rl.domain}/latency",
                        "rl.scheduler.latency",
                        attributes=[{"ref": "rl.domain"}],
                    )
                ],
            },
            id="a key placing one placeholder twice (#36 finding 2)",
        ),
        pytest.param(
            {
                "owner": "rl.rollout",
                "module": "rollout",
                "description": "Rollout.",
                "loops": [
                    {
                        "name": "ppo",
                        "description": "PPO.",
                        "step_keys": [
                            {"key": "rollout/step", "prefix": prefix}
                            for prefix in ("rollout", "actor", "critic", "timing")
                        ],
                    }
                ],
                "teed": [_row("loss", "rl.loss", prefixes=["actor", "critic"])],
            },
            id="one step key under four prefixes (#36 finding 1)",
        ),
        pytest.param(
            {
                "owner": "rl.flags",
                "module": "flags",
                "description": "Flags.",
                "teed": [_row("enabled", "rl.enabled", unit="1", range={"min": "1", "max": "1"})],
            },
            id="equal inclusive bounds: a constant (#36 finding 8)",
        ),
        pytest.param(
            {
                "owner": "rl.memory",
                "module": "memory",
                "description": "Memory.",
                "teed": [_row("gib", "rl.memory.used", unit="GiBy", range={"max": "1e290"})],
            },
            id="a large bound still finite once scaled to By",
        ),
        pytest.param(
            {
                "owner": "rl.critic",
                "module": "critic",
                "description": "Critic.",
                "teed": [
                    _row(
                        "critic/clipfrac",
                        name,
                        unit="1",
                        requirement_level="conditionally_required",
                        condition=condition,
                    )
                    for name, condition in (
                        ("rl.critic.clip.fraction", "config.critic.clip_value"),
                        ("rl.critic.value.sq_error", "not config.critic.clip_value"),
                    )
                ],
            },
            id="one key, two rows under exclusive conditions (#36 model gap)",
        ),
    ],
)
def test_a_catalog_real_code_needs_validates_generates_imports_and_tees(
    tmp_path: Path, data: dict[str, object]
) -> None:
    """Each shape validates, and then nothing fails later (each failed before its fix)."""
    catalog = run_pipeline(write(tmp_path, {"catalog.yaml": data}), list(HOSTILE_VALUES))
    assert catalog is not None, "the catalog must validate"


def test_a_repeated_placeholder_exports_only_keys_whose_places_agree(tmp_path: Path) -> None:
    """``math/scheduler/math/latency`` reaches the series as ``rl.domain=math``; a key
    whose places differ is not the row's, through the generated module and the tee."""
    data = {
        "owner": "rl.scheduler",
        "module": "scheduler",
        "description": "Schedulers.",
        "prefix": "",
        "attributes": [DOMAIN],
        "teed": [
            _row(
                "{rl.domain}/scheduler/{rl.domain}/latency",
                "rl.scheduler.latency",
                attributes=[{"ref": "rl.domain"}],
            )
        ],
    }
    root = write(tmp_path, {"catalog.yaml": data})
    catalog = checked(root)
    assert catalog is not None
    config = Config(root=root)
    with fresh_runtime() as reader:
        imported(render_all(catalog, config), config)
        tee_flat({"math/scheduler/math/latency": 0.5, "math/scheduler/code/latency": 9.0})
        data_points = reader.get_metrics_data()
    assert data_points is not None
    points = [
        (dict(point.attributes or {}), point.value)
        for resource in data_points.resource_metrics
        for scope in resource.scope_metrics
        for metric in scope.metrics
        if metric.name == "rl.scheduler.latency"
        for point in metric.data.data_points
    ]
    assert points == [({"rl.domain": "math"}, 0.5)]


# --- the property ---------------------------------------------------------------------

_ATTRIBUTE_NAMES = ("rl.domain", "rl.phase", "rl.rank", "rl.source")
_LOOP_NAMES = ("grpo", "sft", "x1", "ppo_async")
_MODULES = ("trainer", "rollout", "x")
# Names a generated module binds already: validate must refuse them (drawn now and then).
_HOSTILE_ATTRIBUTES = ("final", "none", "step.keys", "teed.metric", "literal")
_HOSTILE_LOOPS = ("loops", "loop", "metrics", "all")
_HOSTILE_MODULES = ("wandb_metrics", "index", "attributes", "loops", "trainer")
_UNITS = (
    *("", "1", "s", "ms", "ns", "By", "GiBy", "%", "{token}", "{token}/s", "KiBy/s"),
    *("us", "TiBy/ns", "1/s", "{tok/s}", "By.s", "Cel", "{a}{b}", "10^3"),
)
_BOUNDS = ("0", "1", "-1", "0.5", "100", "1e300", "-1e300", "1e-320", "1e308", "-0")
_LITERALS = ("loss", "a/b", "x-y", "time_s", "{{lit}}", "a.b", "step", "ñ", "key", "a b", "//", "0")
_SEPARATORS = ("/", "_", "-", "")
_HUGE = "9" * 9  # the largest the schema takes: beyond any real budget or schedule
_COUNTS = ("2", "8", "64", "1000000", _HUGE)
_PREFIXES = ("", "train", "eval_", "timing/train", "rollout", "actor")


def sometimes_hostile(common: tuple[str, ...], hostile: tuple[str, ...]) -> st.SearchStrategy[str]:
    """Mostly a common name, now and then a name validate must refuse."""
    return st.integers(0, 9).flatmap(lambda pick: st.sampled_from(hostile if pick == 0 else common))


_HOSTILE_TEXT = st.text(
    st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=12
) | st.sampled_from(["A sentence.", '"""', "{{ x }}", "\\", "\u2028", "ok"])


@st.composite
def attributes(draw: st.DrawFn) -> list[dict[str, object]]:
    """Attributes of every domain: enum string/int, open string (spanning or not), open int."""
    names = draw(
        st.lists(sometimes_hostile(_ATTRIBUTE_NAMES, _HOSTILE_ATTRIBUTES), max_size=3, unique=True)
    )
    found: list[dict[str, object]] = []
    for name in names:
        shape = draw(st.sampled_from(["enum", "open", "spans", "int", "int_enum", "bool"]))
        attribute: dict[str, object] = {"name": name, "description": "An attribute."}
        if shape == "enum":
            values = draw(
                st.lists(
                    st.sampled_from(["a", "b/c", "1", "x_y", "ab", "a b", "ü", "-0", "007"]),
                    min_size=1,
                    max_size=3,
                    unique=True,
                )
            )
            attribute |= {
                "type": "string",
                "values": [{"value": v, "description": "V."} for v in values],
            }
        elif shape == "int_enum":
            attribute |= {
                "type": "int",
                "values": [
                    {"value": "1", "description": "One."},
                    {"value": "-2", "description": "Minus two."},
                ],
            }
        elif shape == "int":
            attribute |= {"type": "int", "max_cardinality": draw(st.sampled_from(_COUNTS))}
        elif shape == "bool":
            attribute |= {"type": "bool"}
        else:
            attribute |= {"type": "string", "max_cardinality": draw(st.sampled_from(_COUNTS))}
            if shape == "spans":
                attribute["spans_segments"] = "true"
        if shape in ("enum", "int_enum") and draw(st.booleans()):
            # An open enumeration: its values, and others within a budget.
            attribute |= {"open": "true", "max_cardinality": draw(st.sampled_from(_COUNTS))}
        found.append(attribute)
    return found


@st.composite
def key_pattern(draw: st.DrawFn, names: list[str]) -> str:
    """Literal text and placeholders of ``names`` (a name may come twice), joined."""
    parts = draw(
        st.lists(
            st.one_of(st.sampled_from(_LITERALS), st.sampled_from(names).map(lambda n: f"{{{n}}}"))
            if names
            else st.sampled_from(_LITERALS),
            min_size=1,
            max_size=4,
        )
    )
    text = parts[0]
    for part in parts[1:]:
        text += draw(st.sampled_from(_SEPARATORS)) + part
    return text


@st.composite
def value_range(draw: st.DrawFn) -> dict[str, str]:
    """A range with any of its bounds (several on one side are refused by validate)."""
    sides = draw(
        st.lists(st.sampled_from(["min", "max", "above", "below"]), max_size=2, unique=True)
    )
    return {side: draw(st.sampled_from(_BOUNDS)) for side in sides}


@st.composite
def catalog_files(draw: st.DrawFn) -> dict[str, dict[str, object]]:
    """One or two catalog files with loops, attributes, teed and recorded rows."""
    loops = draw(st.lists(sometimes_hostile(_LOOP_NAMES, _HOSTILE_LOOPS), max_size=2, unique=True))
    files: dict[str, dict[str, object]] = {}
    row_index = 0
    names_of: dict[int, str] = {}  # row index -> the namespace of its file
    for file_index in range(draw(st.integers(1, 2))):
        declared = draw(attributes()) if file_index == 0 else []
        names = [str(a["name"]) for a in declared if a.get("type") in ("string", "int")]
        data: dict[str, object] = {
            "owner": draw(st.sampled_from([f"rl.owner{file_index}", "x", "a_b.c9"])),
            "module": draw(sometimes_hostile((f"mod{file_index}",), _HOSTILE_MODULES)),
            "description": draw(_HOSTILE_TEXT),
        }
        prefixes = _PREFIXES + tuple(f"val-{{{name}}}" for name in names)
        if draw(st.booleans()):
            data["prefix"] = draw(st.sampled_from(_PREFIXES))
        # Each file's series namespace: the default, spelled out or not, or another one.
        namespace = draw(st.sampled_from(_NAMESPACES))
        if namespace != "rl." or draw(st.booleans()):
            data["namespace"] = namespace
        if declared:
            data["attributes"] = declared
        if file_index == 0 and loops:
            data["loops"] = [
                {
                    "name": loop,
                    "description": "A loop.",
                    "step_keys": [
                        {"key": key, "prefix": prefix}
                        for key, prefix in draw(
                            st.lists(
                                st.tuples(
                                    st.sampled_from(["step", "rollout/step", "train/global_step"]),
                                    st.sampled_from(["", "train", "actor", "rollout"]),
                                ),
                                max_size=3,
                                unique=True,
                            )
                        )
                    ],
                }
                for loop in loops
            ]
        teed = []
        for _ in range(draw(st.integers(0, 3))):
            row_index += 1
            names_of[row_index] = namespace
            key = draw(key_pattern(names))
            row: dict[str, object] = {
                "logger_key": key,
                "name": namespace + draw(st.sampled_from(["teed", "foo", "foo.key", "step.keys"]))
                if draw(st.integers(0, 9)) == 0
                else f"{namespace}series.r{row_index}",
                "kind": draw(st.sampled_from(["gauge", "counter", "histogram", "up_down_counter"])),
                "unit": draw(st.sampled_from(_UNITS)),
                "description": draw(_HOSTILE_TEXT),
            }
            used = sorted({p.name for p in parse_pattern(key) if isinstance(p, Placeholder)})
            if draw(st.booleans()):
                prefix = draw(st.sampled_from(prefixes))
                row["prefix"] = prefix
                used = sorted(
                    {*used, *(p.name for p in parse_pattern(prefix) if isinstance(p, Placeholder))}
                )
            if used:
                row["attributes"] = [{"ref": name} for name in used]
            if draw(st.integers(0, 2)) == 0:
                row["range"] = draw(value_range())
            if draw(st.integers(0, 3)) == 0:
                row["value_type"] = "int"
            if loops and draw(st.booleans()):
                row["emitted_by"] = draw(st.lists(st.sampled_from(loops), min_size=1, unique=True))
            if draw(st.booleans()):
                row["requirement_level"] = "required"
            if draw(st.integers(0, 3)) == 0:
                row["every"] = draw(st.sampled_from(["1", "10", _HUGE]))
            if draw(st.integers(0, 5)) == 0:
                row["first_step"] = draw(st.sampled_from(["0", "5", _HUGE]))
            if draw(st.integers(0, 5)) == 0:
                row["cardinality_limit"] = draw(st.sampled_from(_COUNTS))
            if draw(st.integers(0, 5)) == 0:
                row["step_axis"] = draw(st.sampled_from(["samples", "step", "tokens"]))
            if row_index > 1 and draw(st.integers(0, 5)) == 0:
                # The row before may be in the other file, so in another namespace.
                before = f"{names_of[row_index - 1]}series.r{row_index - 1}"
                row["deprecated"] = {"since": "0.1.0", "replaced_by": before}
            if draw(st.integers(0, 5)) == 0:
                row["goal"] = draw(st.sampled_from(["maximize", "minimize"]))
            teed.append(row)
            if draw(st.integers(0, 2)) == 0:
                # A twin of one key under a condition on the run's configuration: validate
                # accepts it only when the two conditions exclude each other.
                row_index += 1
                names_of[row_index] = namespace
                twin = {**copy.deepcopy(row), "name": f"{namespace}series.r{row_index}"}
                twin.pop("deprecated", None)
                for shared, condition in zip(
                    (row, twin), draw(st.sampled_from(_CHOICES)), strict=True
                ):
                    shared["requirement_level"] = "conditionally_required"
                    shared["condition"] = condition
                teed.append(twin)
        data["teed"] = teed
        if draw(st.booleans()):
            row_index += 1
            names_of[row_index] = namespace
            data["recorded"] = [
                {
                    "name": f"{namespace}recorded.r{row_index}",
                    "kind": "histogram",
                    "unit": draw(st.sampled_from(_UNITS)),
                    "description": "A recorded value.",
                }
            ]
        files[f"f{file_index}.yaml"] = data
    return files


_NAMESPACES = ("rl.", "rl.", "jvm.", "gen_ai.", "hw.gpu.")
"""Series namespaces a file declares (``rl.`` twice: the default stays the common case)."""

_CHOICES = (
    ("config.critic.clip_value", "not config.critic.clip_value"),
    ("config.critic.clip_value == true", "not config.critic.clip_value"),
    ('config.algo["adv-kind"] == "gae"', 'config.algo["adv-kind"] == "grpo"'),
    ('not config.algo["adv-kind"]', 'config.algo["adv-kind"] == -1.5'),
    ("config.critic.clip_value", "config.critic.clip_value == true"),
    ("config.critic.clip_value", "config.critic.clip_value > 1"),
    ("when the critic clips values", "not config.critic.clip_value"),
)
"""Conditions twin rows of one key get: exclusive pairs, then overlapping ones and prose."""


PROPERTY = settings(
    max_examples=100,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    # No explain phase: on a failure it reruns the example ~100 times for line coverage.
    phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.shrink],
)


@PROPERTY
@given(catalog_files(), st.lists(st.sampled_from(HOSTILE_VALUES), min_size=1, max_size=6))
def test_any_catalog_that_validates_generates_imports_registers_and_tees(
    files: dict[str, dict[str, object]], values: list[object]
) -> None:
    """validate accepts -> generate, parse, import, register, name and tee all succeed."""
    with tempfile.TemporaryDirectory() as folder:
        catalog = run_pipeline(write(Path(folder), files), values)
    event("validated" if catalog is not None else "refused by validate")
    twins = any(
        "condition" in row
        for data in files.values()
        for row in data.get("teed", ())  # type: ignore[union-attr]
    )
    if twins and catalog is not None:
        event("rows of one key under exclusive conditions validated")
    if catalog is not None and any(f.namespace != "rl." for f in catalog.files):
        event("a file in a namespace other than rl. validated")


@pytest.mark.integration
@settings(PROPERTY, max_examples=15)
@given(catalog_files())
def test_promtool_accepts_the_rules_of_any_catalog_that_validates(
    files: dict[str, dict[str, object]],
) -> None:
    """``promtool check rules`` passes on every rules file of a catalog validate accepts."""
    promtool = shutil.which("promtool")
    if promtool is None:
        pytest.skip("promtool not installed (apt-get install prometheus)")
    with tempfile.TemporaryDirectory() as folder:
        root = write(Path(folder), files)
        catalog = checked(root)
        if catalog is None:
            return
        config = Config(root=root)
        rules = [
            root / path.replace("/", "_")
            for path in render_all(catalog, config)
            if path.endswith(".rules.yaml")
        ]
        for path, text in render_all(catalog, config).items():
            if path.endswith(".rules.yaml"):
                (root / path.replace("/", "_")).write_text(text, encoding="utf-8")
        if not rules:
            return
        done = subprocess.run(
            [promtool, "check", "rules", *map(str, rules)],
            capture_output=True,
            text=True,
            check=False,
            timeout=60,
        )
        assert done.returncode == 0, done.stdout + done.stderr
