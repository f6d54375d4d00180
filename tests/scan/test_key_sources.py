"""Keys from a module constant iterated with ``enumerate`` and from ``dataclasses.asdict``
of a dataclass instance whose class scan knows."""

from __future__ import annotations

from pathlib import Path

import pytest

from codegen.catalog.model import Catalog
from tests.scan.test_sinks import _keys, _scan

_ENUMERATED = """\
import wandb

LOSS_KEYS = ["loss/zz_policy", "loss/zz_kl"]


def report(values):
    stats = {key: values[i] for i, key in enumerate(LOSS_KEYS)}
    for i, name in enumerate(values):
        stats[name] = i
    wandb.log(stats)
"""


def test_a_constant_iterated_with_enumerate_gives_its_strings_as_keys(
    tmp_path: Path, repo_catalog: Catalog
) -> None:
    report = _scan(tmp_path, repo_catalog, {"m.py": _ENUMERATED})

    # each key at its element of the constant (both on line 3), the line a reader fixes
    assert _keys(report) == {"loss/zz_policy": "src/m.py:3", "loss/zz_kl": "src/m.py:3"}
    unresolved = [d for d in report.diagnostics if d.code == "SCAN_UNRESOLVED"]
    assert [d.position.line for d in unresolved if d.position] == [9]  # names of values


_LISTED = """\
import wandb

{imports}_LOSS_KEYS = [
    "loss/zz_kl_avg",
    "loss/zz_pg_avg",
]


def report(stats):
    {bind}metrics = {{}}
    for key in {iterated}:
        metrics[key] = stats[key]
    wandb.log(metrics)
"""

_KEYS_MODULE = """\
SHARED_KEYS = (
    "loss/zz_kl_avg",
    "loss/zz_pg_avg",
)
"""


@pytest.mark.parametrize(
    ("imports", "bind", "iterated", "where"),
    [
        # a module-level list: each key at its own element
        ("", "", "_LOSS_KEYS", {"loss/zz_kl_avg": "src/m.py:4", "loss/zz_pg_avg": "src/m.py:5"}),
        # imported from another scanned module: at its element there
        (
            "from pkg.keys import SHARED_KEYS\n\n",
            "",
            "SHARED_KEYS",
            {"loss/zz_kl_avg": "src/pkg/keys.py:2", "loss/zz_pg_avg": "src/pkg/keys.py:3"},
        ),
        # non-firing: a literal tuple in the loop itself stays at the write
        (
            "",
            "",
            '("loss/zz_kl_avg", "loss/zz_pg_avg")',
            {"loss/zz_kl_avg": "src/m.py:12", "loss/zz_pg_avg": "src/m.py:12"},
        ),
        # non-firing: a local of the constant's name holding other strings
        (
            "",
            '_LOSS_KEYS = ["loss/zz_a", "loss/zz_b"]\n    ',
            "_LOSS_KEYS",
            {"loss/zz_a": "src/m.py:13", "loss/zz_b": "src/m.py:13"},
        ),
    ],
)
def test_a_key_from_a_module_list_constant_is_reported_at_its_element(
    tmp_path: Path,
    repo_catalog: Catalog,
    *,
    imports: str,
    bind: str,
    iterated: str,
    where: dict[str, str],
) -> None:
    source = _LISTED.format(imports=imports, bind=bind, iterated=iterated)
    files = {"m.py": source, "pkg/__init__.py": "", "pkg/keys.py": _KEYS_MODULE}
    report = _scan(tmp_path, repo_catalog, files)

    assert _keys(report) == where


_STATS = """\
import dataclasses
from typing import ClassVar


@dataclasses.dataclass
class BatchStats:
    zz_filtered: int
    zz_solved: float = 0.0
    LIMIT: ClassVar[int] = 3
"""

_LOOP = """\
import wandb
from dataclasses import asdict

from pkg.stats import BatchStats


def step(n, given: BatchStats):
    {bind}
    wandb.log({{f"batch/{{k}}": v for k, v in asdict({argument}).items()}})
"""


@pytest.mark.parametrize(
    ("bind", "argument"), [("stats = BatchStats(n)", "stats"), ("stats = None", "given")]
)
def test_asdict_of_a_dataclass_gives_its_fields_as_keys_where_they_are_declared(
    tmp_path: Path, repo_catalog: Catalog, bind: str, argument: str
) -> None:
    loop = _LOOP.format(bind=bind, argument=argument)
    files = {"pkg/__init__.py": "", "pkg/stats.py": _STATS, "pkg/loop.py": loop}
    report = _scan(tmp_path, repo_catalog, files)

    assert _keys(report) == {
        "batch/zz_filtered": "src/pkg/stats.py:7",
        "batch/zz_solved": "src/pkg/stats.py:8",
    }


@pytest.mark.parametrize(
    "stats",
    [
        _STATS.replace("@dataclasses.dataclass\n", ""),  # no dataclass
        _STATS.replace("class BatchStats:", "class BatchStats(Base):"),  # fields of a base too
    ],
)
def test_asdict_of_a_class_whose_fields_scan_cannot_list_stays_unresolved(
    tmp_path: Path, repo_catalog: Catalog, stats: str
) -> None:
    files = {"pkg/__init__.py": "", "pkg/stats.py": stats}
    files["pkg/loop.py"] = _LOOP.format(bind="stats = BatchStats(n)", argument="stats")
    report = _scan(tmp_path, repo_catalog, files)

    assert _keys(report) == {}
    assert [d.code for d in report.diagnostics] == ["SCAN_UNRESOLVED"]
