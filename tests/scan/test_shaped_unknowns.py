"""A dict scan cannot follow, handed to a wrapper that writes each of its keys into a key
with literal text (``f"eval/{k}"``), is one ``SCAN_UNRESOLVED`` key of that shape where the
dict enters (``eval/{key}``): the shape is kept, and it credits no row."""

from __future__ import annotations

from pathlib import Path

import pytest

from codegen.catalog.model import Catalog
from codegen.scan.scanner import ScanReport, scan

_SOURCE = """\
import wandb


def log_eval(step, data):
    log = {}
    for name in data.keys():
        log[TEMPLATE] = data[name]
    wandb.log(log, step=step)


def evaluate(step, runner):
    result = runner.run()
    log_eval(step, result.metrics)
"""


def _scan(tmp_path: Path, catalog: Catalog, template: str) -> ScanReport:
    path = tmp_path / "src" / "ev.py"
    path.parent.mkdir(parents=True)
    path.write_text(_SOURCE.replace("TEMPLATE", template), encoding="utf-8")
    return scan([path.parent], catalog, cwd=tmp_path, unlogged=False)


@pytest.mark.parametrize(
    ("template", "shown"),
    [('f"zz_eval/{name}"', "zz_eval/{key}"), ('f"zz_eval/{name}-ratio"', "zz_eval/{key}-ratio")],
)
def test_an_unknown_dict_through_a_rewriting_wrapper_keeps_the_shape_where_it_enters(
    tmp_path: Path, repo_catalog: Catalog, template: str, shown: str
) -> None:
    report = _scan(tmp_path, repo_catalog, template)

    found = [(d.code, d.position.line if d.position else 0) for d in report.diagnostics]
    assert found == [("SCAN_UNRESOLVED", 13)]
    message = report.diagnostics[0].message
    assert f"key '{shown}'" in message
    assert "a dict read from `result.metrics`" in message


def test_an_unknown_dict_through_a_wrapper_adding_nothing_is_unresolved_without_a_shape(
    tmp_path: Path, repo_catalog: Catalog
) -> None:
    report = _scan(tmp_path, repo_catalog, "name")

    found = [(d.code, d.position.line if d.position else 0) for d in report.diagnostics]
    assert found == [("SCAN_UNRESOLVED", 13)]
    assert "key '" not in report.diagnostics[0].message
