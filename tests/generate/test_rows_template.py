"""The row layout lives in ``templates/python/_rows.j2``; its compiled form renders the same text.

A generated module's blocks (attribute constants, teed and recorded rows) are the
macros of ``python/_rows.j2``. The built-in layout renders from the compiled form
in :mod:`codegen.generate.python` (a macro call per row would cost more than the
rest of module rendering), so these tests render every block both ways and pin
the template's hash; a project that replaces ``_rows.j2`` gets its own layout,
sandboxed like every template.
"""

from __future__ import annotations

import ast
import hashlib
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from codegen.catalog.model import Catalog, Deprecation
from codegen.catalog.pipeline import load_and_check
from codegen.cli import main
from codegen.config import Config
from codegen.generate.python import ROWS_TEMPLATE_SHA256, render_rows
from tests.adopter_project import ROW as ADOPTER_ROW
from tests.docs_fixtures import HOSTILE_DESCRIPTIONS, fixture_catalog, row

REPO = Path(__file__).resolve().parents[2]
TEMPLATE = REPO / "codegen" / "generate" / "templates" / "python" / "_rows.j2"
CONFIG = Config(root=REPO)


def both_ways(catalog: Catalog) -> list[tuple[str, str, str]]:
    """(file, compiled text, template text) for every file of ``catalog``."""
    attributes = catalog.attributes()
    return [
        (
            f.path,
            render_rows(f, attributes, CONFIG, template=False),
            render_rows(f, attributes, CONFIG, template=True),
        )
        for f in catalog.files
    ]


def test_the_compiled_form_was_written_from_this_template() -> None:
    digest = hashlib.sha256(TEMPLATE.read_bytes()).hexdigest()
    assert digest == ROWS_TEMPLATE_SHA256, (
        "python/_rows.j2 changed: change the compiled blocks in codegen/generate/python.py "
        "(_teed_block, _recorded_block, _attribute_block) the same way, then set "
        f"ROWS_TEMPLATE_SHA256 = {digest!r}"
    )


def test_every_block_of_this_repos_catalog_renders_the_same_both_ways() -> None:
    catalog = load_and_check(CONFIG.catalog_files(), root=REPO).catalog
    rendered = both_ways(catalog)
    assert sum(len(compiled) for _, compiled, _ in rendered) > 10_000
    for path, compiled, template in rendered:
        assert template == compiled, path


def test_hostile_and_deprecated_rows_render_the_same_both_ways() -> None:
    for _path, compiled, template in both_ways(fixture_catalog()):
        assert template == compiled


@given(
    description=st.text(min_size=1, max_size=300),
    replaced_by=st.one_of(st.none(), st.text(min_size=1, max_size=120)),
    teed=st.booleans(),
)
def test_any_text_renders_the_same_both_ways(
    description: str, replaced_by: str | None, teed: bool
) -> None:
    deprecated = None if replaced_by is None else Deprecation("0.1.0", replaced_by, "")
    one = row(
        "rl.fixture.any",
        line=1,
        path="catalog/fixture_any.yaml",
        description=description,
        logger_key="any" if teed else None,
        deprecated=deprecated,
    )
    catalog = fixture_catalog()
    first = catalog.files[0]
    files = (replace(first, teed=(one,) if teed else (), recorded=() if teed else (one,)),)
    for _path, compiled, template in both_ways(Catalog(files)):
        assert template == compiled


@pytest.mark.parametrize("key", sorted(HOSTILE_DESCRIPTIONS))
def test_hostile_descriptions_stay_strings_in_the_template_layout(key: str) -> None:
    hostile = row(
        "rl.fixture.hostile",
        line=1,
        path="catalog/fixture_h.yaml",
        description=HOSTILE_DESCRIPTIONS[key],
        logger_key="hostile",
    )
    first = fixture_catalog().files[0]
    text = render_rows(replace(first, teed=(hostile,), recorded=()), {}, CONFIG, template=True)
    assert HOSTILE_DESCRIPTIONS[key] in [
        node.value.value
        for node in ast.walk(ast.parse(text))
        if isinstance(node, ast.keyword) and isinstance(node.value, ast.Constant)
    ]


ROW = ADOPTER_ROW

TABLE = """\
[tool.metric-catalog]
catalog = ["catalog/*.yaml"]
package = "gen"
package-dir = "gen"
templates-dir = "templates"
"""


def test_a_project_restyles_its_rows_by_replacing_rows_j2(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(TABLE, encoding="utf-8")
    (tmp_path / "catalog").mkdir()
    (tmp_path / "catalog" / "ppo.yaml").write_text(ROW, encoding="utf-8")
    own = TEMPLATE.read_text(encoding="utf-8").replace(
        "{{ row.constant_name }}: Final = TeedMetric(",
        "# {{ row.name }} ({{ row.kind }}, {{ row.description | wordcount }} words)\n"
        "{{ row.constant_name }}: Final = TeedMetric(",
    )
    (tmp_path / "templates" / "python").mkdir(parents=True)
    (tmp_path / "templates" / "python" / "_rows.j2").write_text(own, encoding="utf-8")
    assert main(["generate", "--root", str(tmp_path)]) == 0
    text = (tmp_path / "gen" / "ppo.py").read_text(encoding="utf-8")
    assert "\n# rl.value.loss (gauge, 6 words)\nVALUE_LOSS: Final = TeedMetric(\n" in text
    ast.parse(text)
    assert main(["check", "--root", str(tmp_path)]) == 0


def test_a_replaced_rows_j2_is_sandboxed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "pyproject.toml").write_text(TABLE, encoding="utf-8")
    (tmp_path / "catalog").mkdir()
    (tmp_path / "catalog" / "ppo.yaml").write_text(ROW, encoding="utf-8")
    (tmp_path / "templates" / "python").mkdir(parents=True)
    (tmp_path / "templates" / "python" / "_rows.j2").write_text(
        "{% macro teed_row(row, attributes) %}\n{{ row.__class__ }}\n{% endmacro %}\n"
        "{% macro recorded_row(row, attributes) %}{% endmacro %}\n"
        "{% macro attribute_block(attribute) %}{% endmacro %}\n",
        encoding="utf-8",
    )
    assert main(["generate", "--root", str(tmp_path)]) == 2
    assert "templates/python/_rows.j2:2: access to attribute '__class__'" in capsys.readouterr().err
    assert not (tmp_path / "gen").exists()
