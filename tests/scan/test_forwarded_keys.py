"""A dict's keys handed through two wrappers: the outer one skips the keys a set bound in
its body lists (under an ``if`` too), the inner one prefixes each key with the string its
caller passes (``gather("rollout", log_dict)``). Each key is reported where it is written,
with the prefix; a skipped key is not reported; a set bound twice is not trusted."""

from __future__ import annotations

from pathlib import Path

import pytest

from codegen.catalog.model import Catalog
from codegen.scan.scanner import ScanReport, scan

_METRICS = """\
import wandb


def gather(metric_name, log_dict):
    reduced = {f"{metric_name}/{key}": value for key, value in log_dict.items()}
    wandb.log(reduced)


def log_batch(batch, rank):
    if rank == 0:
        log_dict = {}
        skipped = {"tokens", "masks"}
        REBIND
        for key, value in batch.items():
            if key in skipped:
                continue
            log_dict[key] = sum(value) / len(value)
        gather("zz_rollout", log_dict)
"""

_ACTOR = """\
from metrics import log_batch


def train(data, rank):
    batch = {"tokens": data, "masks": data, "zz_adv": data}
    batch["zz_ret"] = data
    log_batch(batch, rank)
"""


def _scan(tmp_path: Path, catalog: Catalog, rebind: str) -> ScanReport:
    root = tmp_path / "src"
    root.mkdir()
    (root / "metrics.py").write_text(_METRICS.replace("REBIND", rebind), encoding="utf-8")
    (root / "actor.py").write_text(_ACTOR, encoding="utf-8")
    return scan([root], catalog, cwd=tmp_path, unlogged=False)


def _found(report: ScanReport, code: str) -> set[tuple[str, str]]:
    return {
        (d.message.split("'")[1], f"{Path(d.position.path).name}:{d.position.line}")
        for d in report.diagnostics
        if d.code == code and d.position is not None and "key '" in d.message
    }


def test_keys_skipped_by_a_set_in_the_body_and_prefixed_by_the_inner_wrapper(
    tmp_path: Path, repo_catalog: Catalog
) -> None:
    report = _scan(tmp_path, repo_catalog, "pass")

    assert _found(report, "SCAN_UNDECLARED") == {
        ("zz_rollout/zz_adv", "actor.py:5"),
        ("zz_rollout/zz_ret", "actor.py:6"),
    }
    assert _found(report, "SCAN_UNRESOLVED") == set()


@pytest.mark.parametrize("rebind", ["skipped = set(rank)", 'skipped |= {"zz_adv"}'])
def test_a_skip_set_bound_twice_cannot_decide_a_key(
    tmp_path: Path, repo_catalog: Catalog, rebind: str
) -> None:
    report = _scan(tmp_path, repo_catalog, rebind)

    assert _found(report, "SCAN_UNDECLARED") == set()
