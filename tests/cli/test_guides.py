"""The integration guides work as written for an adopter: their catalogs validate and lint,
their Python parses, they name the adopter's package (never this repository's), and the
README links every one of them."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from codegen.cli import main

REPO = Path(__file__).resolve().parents[2]
GUIDES = REPO / "docs" / "guide"
INTEGRATIONS = ("flat-keys.md", "wandb.md", "tensorboard.md", "alerts.md", "pytest.md")
_FENCE = re.compile(r"^```(\w+)\n(.*?)^```$", re.MULTILINE | re.DOTALL)


def _blocks(page: str, language: str) -> list[str]:
    text = (GUIDES / page).read_text(encoding="utf-8")
    return [body for lang, body in _FENCE.findall(text) if lang == language]


@pytest.mark.parametrize("page", INTEGRATIONS)
def test_every_integration_guide_is_linked_from_the_readme(page: str) -> None:
    assert f"(docs/guide/{page})" in (REPO / "README.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("page", INTEGRATIONS)
def test_a_guide_speaks_to_an_adopter_not_to_this_repository(page: str) -> None:
    text = (GUIDES / page).read_text(encoding="utf-8")
    assert "make generate" not in text
    assert "metric_catalog.generated" not in text


@pytest.mark.parametrize("page", INTEGRATIONS)
def test_every_python_example_of_a_guide_parses(page: str) -> None:
    for block in _blocks(page, "python"):
        ast.parse(block)


@pytest.mark.parametrize("page", ["flat-keys.md", "wandb.md"])
def test_the_catalog_a_guide_shows_validates_and_lints_clean(
    page: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (catalog,) = [block for block in _blocks(page, "yaml") if block.startswith(("#", "owner:"))]
    folder = tmp_path / "myrl" / "telemetry" / "catalog"
    folder.mkdir(parents=True)
    (folder / "train.yaml").write_text(catalog, encoding="utf-8")
    (tmp_path / "pyproject.toml").write_text(
        '[tool.metric-catalog]\ncatalog = ["myrl/telemetry/catalog/*.yaml"]\n'
        'package = "myrl.telemetry.generated"\npackage-dir = "myrl/telemetry/generated"\n',
        encoding="utf-8",
    )
    assert main(["lint", "--root", str(tmp_path), "--warnings-as-errors"]) == 0, (
        capsys.readouterr().out
    )
