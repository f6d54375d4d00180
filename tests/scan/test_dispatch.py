"""``self.learn(...)`` in a base class whose ``learn`` does nothing goes to the scanned
subclasses' overrides: what they return is what is logged (the template-method shape)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from codegen.catalog.model import Catalog
from codegen.scan.dispatch import is_abstract
from codegen.scan.scanner import ScanReport, scan

_BASE = """\
import abc
import wandb


class LearnerBase(abc.ABC):
    def run(self):
        info = self.learn(1)
        wandb.log({"train/%s" % k: v for k, v in info.items()})

    @abc.abstractmethod
    def learn(self, learning_round):
        \"\"\"One round of learning.\"\"\"
"""

_RL = """\
from learners.base import LearnerBase


class RLLearner(LearnerBase):
    def learn(self, learning_round):
        return {"zz_round": learning_round}
"""

_PPO = """\
from learners import RLLearner


class PPOLearner(RLLearner):
    def learn(self, learning_round):
        return {"zz_pg_loss": 0.1}
"""


def _scan(tmp_path: Path, catalog: Catalog, files: dict[str, str]) -> ScanReport:
    root = tmp_path / "src"
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return scan([root], catalog, cwd=tmp_path, unlogged=False)


def _keys(report: ScanReport) -> dict[str, str]:
    return {
        d.message.split("'")[1]: f"{d.position.path}:{d.position.line}"
        for d in report.diagnostics
        if d.code == "SCAN_UNDECLARED" and d.position is not None
    }


def test_an_abstract_methods_call_returns_what_every_scanned_override_returns(
    tmp_path: Path, repo_catalog: Catalog
) -> None:
    files = {
        "learners/__init__.py": "from .rl import RLLearner\n",
        "learners/base.py": _BASE,
        "learners/rl.py": _RL,
        "algorithms/ppo.py": _PPO,  # derives through the package's re-export
    }
    report = _scan(tmp_path, repo_catalog, files)

    assert _keys(report) == {
        "train/zz_round": "src/learners/rl.py:6",
        "train/zz_pg_loss": "src/algorithms/ppo.py:6",
    }


def test_an_abstract_method_with_no_scanned_override_stays_unresolved(
    tmp_path: Path, repo_catalog: Catalog
) -> None:
    report = _scan(tmp_path, repo_catalog, {"learners/base.py": _BASE})

    assert _keys(report) == {}
    assert [d.code for d in report.diagnostics] == ["SCAN_UNRESOLVED"]


def test_a_base_method_with_a_body_is_followed_itself_not_its_overrides(
    tmp_path: Path, repo_catalog: Catalog
) -> None:
    base = _BASE.replace('        """One round of learning."""', '        return {"zz_base": 1}')
    report = _scan(tmp_path, repo_catalog, {"learners/base.py": base, "learners/rl.py": _RL})

    assert _keys(report) == {"train/zz_base": "src/learners/base.py:12"}


@pytest.mark.parametrize(
    ("body", "abstract"),
    [
        ("pass", True),
        ("...", True),
        ('"""Doc."""\n    raise NotImplementedError', True),
        ("raise NotImplementedError()", True),
        ("return {}", False),
        ("raise ValueError('no')", False),
    ],
)
def test_a_method_is_abstract_when_its_body_does_nothing(body: str, abstract: bool) -> None:
    [func] = ast.parse(f"def f(self):\n    {body}\n").body
    assert isinstance(func, ast.FunctionDef)
    assert is_abstract(func) is abstract
