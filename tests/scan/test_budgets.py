"""Adversarial shapes ``scan`` must get through in bounded work, each with a positioned
finding where it gives up: an attribute chain deeper than ``ast.unparse`` recurses, a class
of thousands of methods each logging what all of them write, a key filter calling a helper
that calls itself over a tuple of prefixes."""

from __future__ import annotations

from pathlib import Path

import pytest

from codegen.catalog.model import Catalog
from codegen.scan.extract import WORK_BUDGET
from codegen.scan.scanner import ScanReport, scan


def _scan(tmp_path: Path, catalog: Catalog, source: str) -> ScanReport:
    (tmp_path / "train.py").write_text(source, encoding="utf-8")
    return scan([tmp_path / "train.py"], catalog, cwd=tmp_path, unlogged=False)


def _lines(report: ScanReport) -> list[str]:
    return report.to_text().splitlines()


_CHAIN = "out" + ".a" * 999 + ".metrics"


@pytest.mark.parametrize(
    ("statement", "column"),
    [
        (f"wandb.log({_CHAIN})", 15),
        (f"wandb.log({{f'x/{{{_CHAIN}}}': 1}})", 16),
        (f"wandb.log({{{_CHAIN}: 1}})", 16),
        (f"wandb.log(dict({_CHAIN}))", 20),
    ],
    ids=["logged-dict", "f-string-key", "key", "dict-call"],
)
def test_an_attribute_chain_999_deep_is_an_unresolved_finding_at_its_line(
    tmp_path: Path, repo_catalog: Catalog, statement: str, column: int
) -> None:
    report = _scan(tmp_path, repo_catalog, f"import wandb\ndef f(out):\n    {statement}\n")

    [finding] = report.diagnostics
    assert finding.code == "SCAN_UNRESOLVED"
    assert str(finding.position) == f"train.py:3:{column}"
    assert "out ... .a.metrics" in finding.message  # its ends shown, the middle elided
    assert len(finding.message) < 1_000


def test_a_shallow_chain_is_shown_whole(tmp_path: Path, repo_catalog: Catalog) -> None:
    report = _scan(tmp_path, repo_catalog, "import wandb\ndef f(out):\n    wandb.log(out.a.b)\n")

    [finding] = report.diagnostics
    assert "`out.a.b`" in finding.message


def _methods(count: int) -> str:
    """A class of ``count`` methods, each writing one key of ``self.m``, calling the next,
    and logging ``self.m`` (each read merges what every other method writes)."""
    lines = ["import wandb", "class T:"]
    for i in range(count):
        lines += [
            f"    def m{i}(self):",
            f"        self.m['k{i}'] = 1",
            f"        self.m{(i + 1) % count}()",
            "        wandb.log(self.m)",
        ]
    return "\n".join(lines) + "\n"


def test_a_class_whose_methods_log_what_all_write_spends_the_budget_then_says_so(
    tmp_path: Path, repo_catalog: Catalog
) -> None:
    count = 2 * int(WORK_BUDGET**0.5)  # n reads of n writers: 4x the budget
    report = _scan(tmp_path, repo_catalog, _methods(count))

    undeclared = [d for d in report.diagnostics if d.code == "SCAN_UNDECLARED"]
    spent = [d for d in report.diagnostics if "work budget" in d.message]
    assert {d.message.split("'")[1] for d in undeclared} == {f"k{i}" for i in range(count)}
    assert spent  # the reads past the budget: unresolved, never guessed
    assert all(d.code == "SCAN_UNRESOLVED" and d.position is not None for d in spent)
    assert len(report.diagnostics) <= 2 * count  # findings linear in the class


def test_a_small_class_of_the_same_shape_is_read_whole(
    tmp_path: Path, repo_catalog: Catalog
) -> None:
    report = _scan(tmp_path, repo_catalog, _methods(50))

    assert not [d for d in report.diagnostics if "work budget" in d.message]
    assert len([d for d in report.diagnostics if d.code == "SCAN_UNDECLARED"]) == 50


_SKIP = "SKIP = (" + ", ".join(f'"{c}/"' for c in "abcdefghijklmnopqrstuvwxyz") + ")"


def _filtered(helper: str, keys: int) -> str:
    names = [f"{a}{b}/x" for a in "mnopq" for b in "rstuvwxyz"][:keys]  # 4 characters
    literal = ", ".join(f'"{name}": {i}' for i, name in enumerate(names))
    return "\n".join(
        [
            "import wandb",
            _SKIP,
            "def keep(k):",
            f"    return {helper}",
            "def filtered(metrics):",
            "    out = {}",
            "    for k, v in metrics.items():",
            "        if keep(k):",
            "            continue",
            "        out[k] = v",
            "    return out",
            "def train():",
            f"    wandb.log(filtered({{{literal}}}))",
            "",
        ]
    )


def test_a_self_recursive_filter_helper_is_evaluated_once_per_argument(
    tmp_path: Path, repo_catalog: Catalog
) -> None:
    # 26 prefixes, 3 levels: 26**3 calls per key unless a repeated call is remembered.
    helper = "len(k) > 1 and any(keep(k[1:]) or p == k for p in SKIP)"
    report = _scan(tmp_path, repo_catalog, _filtered(helper, 40))

    assert {d.code for d in report.diagnostics} == {"SCAN_UNDECLARED"}
    assert len(report.diagnostics) == 40


def test_a_filter_helper_past_the_step_budget_leaves_the_key_unresolved_where_written(
    tmp_path: Path, repo_catalog: Catalog
) -> None:
    # A list argument cannot be remembered: 26**3 calls per key, over the step budget.
    helper = "len(k) > 1 and any(keep(list(k[1:])) or p == k for p in SKIP)"
    report = _scan(tmp_path, repo_catalog, _filtered(helper, 3))

    assert [d.code for d in report.diagnostics] == ["SCAN_UNRESOLVED"] * 3
    assert all("whose test scan cannot evaluate" in d.message for d in report.diagnostics)
    assert all(d.position is not None and d.position.line == 13 for d in report.diagnostics)
