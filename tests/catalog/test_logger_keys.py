"""Any key real code logs: printable text with ``@ : = %``, spaces, quotes and backslashes.

A logger key may hold every printable character; braces form placeholders
(``{{``/``}}`` are literal braces), and control or format characters stay refused (the bad-input
corpus holds those cases). Such a key survives generate -> import -> tee
unchanged, and ``LOGGER_KEY_BACKEND_UNSAFE`` names the logging backends that
would reject or rewrite it.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest
import yaml

from codegen.catalog.lints import lint_row
from codegen.catalog.pipeline import load_and_check
from codegen.cli import main
from metric_catalog.series_rules import literal_text
from metric_catalog.tee import tee_metrics
from tests.catalog.test_lints import make_row
from tests.otel_fixtures import clean_otel, collect, installed_reader

__all__ = ["clean_otel"]  # fixture used by name

# Keys verl and other stacks log, and the hardest text for the generated module's escaping.
KEYS = {
    "rl.keys.val_score": "val-core/openai~gsm8k/acc/mean@4",
    "rl.keys.quoted": 'it\'s "quoted"',
    "rl.keys.backslash": "back\\slash\\n",
    "rl.keys.assign": "lr=3e-4:warmup %",
    "rl.keys.unicode": "débit/gpu №1",
    "rl.keys.triple": "'''\"\"\"",
    "rl.keys.brace": "lit{{x}}/y",  # logged as lit{x}/y
}


def catalog_text() -> str:
    """A catalog file teeing one gauge per key of :data:`KEYS` (YAML-escaped by ``yaml``)."""
    rows = [
        {
            "logger_key": key,
            "name": name,
            "kind": "gauge",
            "unit": "1",
            "description": f"Value logged under a key with unusual characters, {name[8:]}.",
            "no_lint": ["LOGGER_KEY_BACKEND_UNSAFE"],
        }
        for name, key in KEYS.items()
    ]
    doc = {
        "owner": "myrl.keys",
        "module": "keys",
        "description": "Keys with every printable character.",
        "prefix": "train",
        "teed": rows,
    }
    return yaml.safe_dump(doc, allow_unicode=True, sort_keys=False)


def test_printable_keys_validate_clean(tmp_path: Path) -> None:
    """No error and, with the lint silenced, no warning for any of the keys."""
    path = tmp_path / "catalog" / "keys.yaml"
    path.parent.mkdir()
    path.write_text(catalog_text(), encoding="utf-8")
    result = load_and_check([path], root=tmp_path)
    assert result.diagnostics == ()
    assert [row.logger_key for _file, row in result.catalog.rows()] == list(KEYS.values())


def test_printable_keys_round_trip_through_generate_import_and_tee(
    tmp_path: Path, clean_otel: None
) -> None:
    """The generated module holds each key exactly, and a log under it reaches its series."""
    (tmp_path / "catalog").mkdir()
    (tmp_path / "catalog" / "keys.yaml").write_text(catalog_text(), encoding="utf-8")
    assert main(["generate", "--root", str(tmp_path)]) == 0
    source = tmp_path / "src" / "metric_catalog" / "generated" / "keys.py"
    spec = importlib.util.spec_from_file_location("generated_printable_keys", source)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    try:
        spec.loader.exec_module(module)
        assert [row.logger_key for row in module.TEED] == list(KEYS.values())
        logged = {
            literal_text(key): float(index) for index, key in enumerate(KEYS.values(), start=1)
        }
        with installed_reader() as reader:
            tee_metrics(logged, prefix="train")
            series = collect(reader)
    finally:
        del sys.modules[spec.name]
    assert {name: series[name].value for name in KEYS} == {
        name: logged[literal_text(key)] for name, key in KEYS.items()
    }
    # resolve shows the same keys, as JSON data.
    assert main(["resolve", "--root", str(tmp_path), "--format", "json"]) == 0


@pytest.mark.parametrize(
    ("key", "backends"),
    [
        ("acc/mean@4", ["MLflow", "TensorBoard", "W&B", "Prometheus"]),
        ("lr:warmup", ["TensorBoard", "W&B"]),
        ("timing s", ["TensorBoard", "W&B", "Prometheus"]),
        ("débit", ["W&B", "Prometheus"]),
        ("set{{x}}", ["MLflow", "TensorBoard", "W&B", "Prometheus"]),
        ("val/{rl.dataset}/acc=1", ["MLflow", "TensorBoard", "W&B", "Prometheus"]),
    ],
)
def test_backend_unsafe_lint_names_each_backend_that_rejects_or_rewrites_the_key(
    key: str, backends: list[str]
) -> None:
    """The warning names exactly the backends whose rule the key's characters break."""
    (finding,) = [
        d for d in lint_row(make_row(logger_key=key)) if d.code == "LOGGER_KEY_BACKEND_UNSAFE"
    ]
    named = [b for b in ("MLflow", "TensorBoard", "W&B", "Prometheus") if b in finding.message]
    assert named == backends
    assert "no_lint: [LOGGER_KEY_BACKEND_UNSAFE]" in finding.message


def test_backend_unsafe_lint_says_what_each_backend_does_with_which_characters() -> None:
    """Each verdict reads as a sentence: torchtitan's 'mfu(%)' names the characters in place."""
    (finding,) = [
        d for d in lint_row(make_row(logger_key="mfu(%)")) if d.code == "LOGGER_KEY_BACKEND_UNSAFE"
    ]
    chars = "'%' '(' ')'"
    assert f"MLflow rejects {chars};" in finding.message
    assert f"TensorBoard (TensorFlow, tensorboardX) replaces {chars} with '_';" in finding.message
    assert f"W&B cannot sort or filter keys with {chars};" in finding.message
    assert f"a Prometheus metric name made from the key cannot hold {chars};" in finding.message


@pytest.mark.parametrize(
    "key", ["reward", "advantages/mean", "timing/train-step.x", "setup/{rl.setup.phase}_time_s"]
)
def test_backend_unsafe_lint_is_silent_on_classic_keys_and_placeholders(key: str) -> None:
    """Letters, digits, '_', '.', '-', '/' and placeholders: every backend keeps them."""
    assert "LOGGER_KEY_BACKEND_UNSAFE" not in [d.code for d in lint_row(make_row(logger_key=key))]


def test_the_schema_copy_names_the_printable_key_rule() -> None:
    """Editors get the same rule: the schema's description says what a key may hold."""
    schema = json.loads(
        (Path(__file__).parents[2] / "codegen/schema/catalog.schema.json").read_text("utf-8")
    )
    assert "any printable text" in schema["$defs"]["loggerKey"]["description"]


def _enum_catalog(tmp_path: Path, values: list[str], key: str) -> list[str]:
    """LOGGER_KEY_BACKEND_UNSAFE messages of a one-row catalog whose key uses an attribute."""
    attribute: dict[str, object] = {
        "name": "myrl.loss",
        "type": "string",
        "description": "Which loss of the loss dict a value is.",
    }
    if values:
        attribute["values"] = [{"value": v, "description": f"The {v} value."} for v in values]
    else:
        attribute["max_cardinality"] = "8"
    doc = {
        "owner": "myrl.losses",
        "module": "losses",
        "description": "Losses logged under their own names.",
        "prefix": "",
        "attributes": [attribute],
        "teed": [
            {
                "logger_key": key,
                "name": "rl.losses.value",
                "kind": "gauge",
                "unit": "",
                "description": "Value of one loss of the loss dict.",
                "attributes": [{"ref": "myrl.loss"}],
            }
        ],
    }
    path = tmp_path / "losses.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    result = load_and_check([path], root=tmp_path)
    assert [d for d in result.diagnostics if d.code != "LOGGER_KEY_BACKEND_UNSAFE"] == []
    return [d.message for d in result.diagnostics]


@pytest.mark.parametrize(
    ("values", "key", "warned"),
    [
        # Megatron-LM's loss dict: '{megatron.loss} vs samples' logs 'lm loss vs samples'.
        (["lm loss", "sop loss"], "{myrl.loss}", "' ' (through {myrl.loss}'s values 'lm loss'"),
        (["lm loss", "mlm"], "{myrl.loss}/mean", "through {myrl.loss}'s values 'lm loss')"),
        (["acc@4", "mean"], "val/{myrl.loss}", "'@' (through {myrl.loss}'s values 'acc@4')"),
        # Classic values, or an open placeholder (known only at run time): nothing to judge.
        (["lm_loss", "sop-loss"], "{myrl.loss}", None),
        ([], "{myrl.loss}/x", None),
    ],
)
def test_backend_unsafe_lint_judges_the_values_an_enum_placeholder_logs(
    tmp_path: Path, values: list[str], key: str, warned: str | None
) -> None:
    """An enum placeholder logs its values: a space in one is a space in the key."""
    messages = _enum_catalog(tmp_path, values, key)
    if warned is None:
        assert messages == []
    else:
        (message,) = messages
        assert warned in message
        assert "TensorBoard" in message
