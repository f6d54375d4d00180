"""One table of every diagnostic code: complete, with no dead code, and its docs page current."""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

from codegen.catalog.lints import LINTS, META_RULES
from codegen.codes import CODES, REFERENCE_PAGE, STAGES, reference_page
from codegen.diff import RULES as DIFF_RULES
from codegen.live_check import FINDING_KINDS
from codegen.live_check.findings import KINDS

REPO = Path(__file__).resolve().parents[2]
_SCREAMING = re.compile(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*\Z")

# Upper-case string literals in codegen/ that are not diagnostic codes (argparse
# metavars and ``__all__`` entries are skipped by the scan itself).
NOT_CODES = frozenset(
    {
        "BETA",  # diff: stability names
        "STABLE",
        "HEAD",  # diff: the default baseline ref
        "TEED",  # render_python: the generated modules' tuples of rows
        "RECORDED",
        "STEP_KEYS",  # render_python: the generated loops' step keys
        "LOOPS",  # render_wandb: the generated table of every loop's definitions
        "BOOKKEEPING",  # render_python: the generated file's bookkeeping keys
        "DIR",  # config: the metavar of a folder key's flag
        "HELP",  # cli: the constant naming each command module's one-line description
        "O_NONBLOCK",  # safe_fs, writer: os flags looked up where the platform has them
        "O_CLOEXEC",
        "RUN",  # commands: the positional named when --catalog took its paths
        "PATHS",
        "COLUMNS",  # cli_reference: the environment variable argparse wraps help at
        "O_NOFOLLOW",
        "GET",  # runs.telemetry: the HTTP method a scrape sends
    }
)


def _skipped(tree: ast.Module) -> set[int]:
    """Ids of the literals that are argparse metavars."""
    return {
        id(keyword.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        for keyword in node.keywords
        if keyword.arg == "metavar"
    }


def _exported(tree: ast.Module) -> set[str]:
    """The names listed in a module's ``__all__``."""
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
                for item in ast.walk(node):
                    if isinstance(item, ast.Constant) and isinstance(item.value, str):
                        names.add(item.value)
    return names


def emitted_codes() -> set[str]:
    """Every upper-case string literal of codegen/ that may be a code, plus live-check's kinds."""
    found: set[str] = set()
    for path in sorted((REPO / "codegen").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        exported = _exported(tree)
        skipped = _skipped(tree)
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and len(node.value) > 2
                and _SCREAMING.match(node.value)
                and node.value not in exported
                and id(node) not in skipped
            ):
                found.add(node.value)
    return (found - NOT_CODES) | {kind.upper() for kind in FINDING_KINDS}


def test_every_code_the_code_base_can_emit_is_in_the_table() -> None:
    missing = emitted_codes() - {code.code for code in CODES}
    assert not missing, f"add these to codegen/codes.py (or NOT_CODES): {sorted(missing)}"


def test_the_table_holds_no_dead_code() -> None:
    dead = {code.code for code in CODES} - emitted_codes()
    assert not dead, f"nothing emits these: {sorted(dead)}"


def test_every_expected_case_code_is_in_the_table() -> None:
    expected = tomllib.loads((REPO / "tests" / "cases" / "expected.toml").read_text())
    codes = {case["code"] for case in expected.values()}
    assert codes <= {code.code for code in CODES}


def test_rule_tables_are_read_not_copied() -> None:
    by_code = {(c.code, c.stage): c for c in CODES}
    for lint in LINTS.values():
        entry = by_code[lint.code, "lint"]
        assert (entry.level, entry.meaning, entry.fix) == (
            lint.severity.value,
            lint.summary,
            lint.fix,
        )
    for code, severity in META_RULES.items():
        assert by_code[code, "lint"].level == severity.value
    for rule in DIFF_RULES.values():
        assert by_code[rule.code, "diff"].level == rule.severity.value
    for kind in FINDING_KINDS:
        assert by_code[kind.upper(), "live-check"].meaning == KINDS[kind].summary


def test_each_entry_has_a_stage_a_level_a_meaning_and_a_fix() -> None:
    assert len({(c.code, c.stage) for c in CODES}) == len(CODES)
    for code in CODES:
        assert code.stage in STAGES
        assert code.meaning.strip(), code.code
        assert code.fix.strip(), code.code
        assert code.level.split(";")[0] in {"error", "warning"}


def test_the_diagnostics_reference_page_is_current() -> None:
    page = (REPO / REFERENCE_PAGE).read_text(encoding="utf-8")
    assert page == reference_page(), "run `python -m codegen.codes --write` (make generate)"
    for code in CODES:
        assert f"| `{code.code}` |" in page
