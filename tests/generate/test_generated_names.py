"""Generated names never collide: ``validate`` reads the names each Python output declares
(:mod:`codegen.generate.names`) and refuses, at the catalog position, what would rebind one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from codegen.cli import main
from codegen.generate import python, wandb
from codegen.generate.plan import generation_diagnostics
from tests.catalog_projects import loaded_catalog

BASE = """\
owner: myrl.trainer
module: trainer
description: Trainer metrics.
prefix: train
loops:
  - name: grpo
    description: GRPO.
attributes:
  - name: rl.kind
    type: string
    description: Which kind.
    values:
      - {value: a, description: The a kind.}
teed:
  - logger_key: loss
    name: rl.loss
    kind: gauge
    unit: ""
    description: Training loss of the step.
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The working directory: a project with an empty ``catalog/``."""
    (tmp_path / "catalog").mkdir()
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize(
    ("edit", "where", "words"),
    [
        # #37: LOOPS would be overwritten by the module's own table of loops.
        (("name: grpo", "name: loops"), (6, 5), "would generate LOOPS"),
        # #37: define_loop (the by-name function) would be replaced.
        (("name: grpo", "name: loop"), (6, 5), "would generate define_loop"),
        # The imported define_metrics would be replaced by the loop's own function.
        (("name: grpo", "name: metrics"), (6, 5), "would generate define_metrics"),
        # #37: the owner module would be the W&B definitions' own file.
        (("module: trainer", "module: wandb_metrics"), (2, 9), "would generate wandb_metrics"),
        # The owner's docs page would overwrite the docs site's index page.
        (("module: trainer", "module: index"), (2, 9), "the index page"),
        # An attribute's Literal alias named like an import of the module.
        (("name: rl.kind", "name: final"), (9, 11), "would generate Final"),
        (("name: rl.kind", "name: teed.metric"), (9, 11), "would generate TeedMetric"),
        # ... or like a Python keyword.
        (("name: rl.kind", "name: none"), (9, 11), "'None'"),
        # A row constant named like the module's tuple of rows.
        (("name: rl.loss", "name: rl.teed"), (16, 11), "would generate TEED"),
    ],
)
def test_validate_refuses_a_name_a_generated_module_already_binds(
    project: Path,
    capsys: pytest.CaptureFixture[str],
    edit: tuple[str, str],
    where: tuple[int, int],
    words: str,
) -> None:
    """One positioned GENERATED_NAME_CLASH from validate, and generate writes nothing."""
    (project / "catalog" / "trainer.yaml").write_text(BASE.replace(*edit), encoding="utf-8")
    assert main(["validate", "--format", "json"]) == 1
    (record,) = json.loads(capsys.readouterr().out)
    assert (record["code"], (record["line"], record["column"])) == ("GENERATED_NAME_CLASH", where)
    assert words in record["message"]
    assert "rename" in record["message"]
    assert main(["generate"]) == 1
    assert not (project / "src").exists()


def test_a_catalog_whose_names_are_distinct_validates_and_generates(project: Path) -> None:
    """Names close to the module's own (loop ``loops2``, attribute ``finals``) are fine."""
    text = BASE.replace("name: grpo", "name: loops2").replace("name: rl.kind", "name: finals")
    (project / "catalog" / "trainer.yaml").write_text(text, encoding="utf-8")
    assert main(["validate"]) == 0
    assert main(["generate"]) == 0


@pytest.mark.usefixtures("registry")
def test_each_output_binds_only_the_names_it_declares(tmp_path: Path) -> None:
    """The names the outputs declare cover every name their modules bind: one source."""
    catalog = loaded_catalog(tmp_path, BASE)
    assert generation_diagnostics(catalog) == []
    (catalog_file,) = catalog.files
    namespace: dict[str, object] = {"__name__": "trainer_under_test"}
    exec(compile(python.render_python_module(catalog_file), "trainer.py", "exec"), namespace)
    declared = {c.name for c in python.module_names(catalog_file)}
    exported = {c.name for c in python.module_names(catalog_file) if c.exported}
    assert set(namespace["__all__"]) == exported  # type: ignore[call-overload]
    assert {name for name in namespace if not name.startswith("__")} <= declared
    wandb_namespace: dict[str, object] = {"__name__": "wandb_metrics_under_test"}
    exec(compile(wandb.render_wandb_module(catalog), "wandb_metrics.py", "exec"), wandb_namespace)
    declared = {c.name for c in wandb.generated_names(catalog) if c.module == wandb.MODULE}
    assert {name for name in wandb_namespace if not name.startswith("__")} == declared


def test_two_files_sharing_a_module_are_reported_once(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """DUPLICATE_MODULE says it; the names the two modules share add no second finding."""
    (project / "catalog" / "a.yaml").write_text(BASE, encoding="utf-8")
    other = BASE.replace("rl.loss", "rl.other.loss").replace("name: grpo", "name: sft")
    other = other.replace("logger_key: loss", "logger_key: other_loss")
    (project / "catalog" / "b.yaml").write_text(other, encoding="utf-8")
    assert main(["validate", "--format", "json"]) == 1
    codes = [record["code"] for record in json.loads(capsys.readouterr().out)]
    assert "GENERATED_NAME_CLASH" not in codes
    assert "DUPLICATE_MODULE" in codes
