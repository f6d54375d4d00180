"""A wrapper's parameters, read from its callers: a dict parameter looped over directly, and
a string parameter that names part of every key (``f"{metric_name}/{key}"``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from codegen.catalog.model import Catalog
from codegen.scan.scanner import ScanReport, scan

_SOURCE = """\
import wandb


def reduce(log_dict{annotation}):
    reduced = {{}}
    for key in log_dict:
        reduced[key] = 1.0
    return reduced


def gather(metric_name, log_dict):
    reduced = reduce(log_dict)
    out = {{f"{{metric_name}}/{{key}}": v for key, v in reduced.items()}}
    wandb.log(out)


def train():
    gather({name}, {{"zz_len_mean": 1}})
"""


def _scan(tmp_path: Path, catalog: Catalog, source: str) -> ScanReport:
    (tmp_path / "m.py").write_text(source, encoding="utf-8")
    return scan([tmp_path / "m.py"], catalog, cwd=tmp_path, unlogged=False)


def _found(report: ScanReport) -> list[tuple[str, str, int]]:
    return [
        (d.code, d.message.split("'")[1], d.position.line if d.position else 0)
        for d in report.diagnostics
    ]


@pytest.mark.parametrize("annotation", [": dict", ": Dict[str, float]", ": Mapping[str, Any]"])
def test_a_loop_over_a_dict_parameter_gives_its_callers_keys_under_their_string_prefix(
    tmp_path: Path, repo_catalog: Catalog, annotation: str
) -> None:
    source = _SOURCE.format(annotation=annotation, name='"multi_turn"')
    report = _scan(tmp_path, repo_catalog, source)

    assert _found(report) == [("SCAN_UNDECLARED", "multi_turn/zz_len_mean", 18)]


def test_a_loop_over_an_unannotated_parameter_stays_unresolved(
    tmp_path: Path, repo_catalog: Catalog
) -> None:
    source = _SOURCE.format(annotation="", name='"multi_turn"')
    report = _scan(tmp_path, repo_catalog, source)

    assert [code for code, _, _ in _found(report)] == ["SCAN_UNRESOLVED"]


def test_a_prefix_parameter_given_no_string_stays_a_hole(
    tmp_path: Path, repo_catalog: Catalog
) -> None:
    source = _SOURCE.format(annotation=": dict", name="some_name()")
    report = _scan(tmp_path, repo_catalog, source)

    assert [code for code, _, _ in _found(report)] == ["SCAN_UNRESOLVED"]
    assert "zz_len_mean" in report.diagnostics[0].message
