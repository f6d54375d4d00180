"""``generate`` is one transaction: a failed write, rename or a kill -9 never leaves a half tree.

Faults are injected in the writer's low-level operations (``_write_new``,
``_rename``, ``_link``, ``_remove``), as a read-only folder or a full disk
would raise them; ``chmod`` cannot simulate them because CI runs as root.
"""

from __future__ import annotations

import errno
import os
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from codegen.cli import main
from codegen.generate import writer
from codegen.generate.plan import load_plan, plan_changes
from codegen.generate.writer import FileChange, WriteError, apply_changes, is_scratch

FIXTURES = Path(__file__).parent.parent / "fixtures" / "generate"
MANAGED = ("src", "docs", ".cache")


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file under the generated folders (and the cache), by root-relative path."""
    found: dict[str, bytes] = {}
    for top in MANAGED:
        for path in sorted((root / top).rglob("*")):
            if path.is_file():
                found[path.relative_to(root).as_posix()] = path.read_bytes()
    return found


def scratch(root: Path) -> list[str]:
    """Temp or backup files of a transaction left anywhere under ``root``."""
    return sorted(p.relative_to(root).as_posix() for p in root.rglob(".*") if is_scratch(p.name))


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A generated project whose catalog then changed: updates, creations and deletions pending."""
    (tmp_path / "catalog").mkdir()
    for source in sorted(FIXTURES.glob("*.yaml")):
        shutil.copy(source, tmp_path / "catalog" / source.name)
    assert main(["generate", "--root", str(tmp_path)]) == 0
    beta = tmp_path / "catalog" / "beta.yaml"
    gamma = beta.read_text(encoding="utf-8").replace("beta", "gamma")
    (tmp_path / "catalog" / "gamma.yaml").write_text(gamma, encoding="utf-8")
    beta.unlink()
    alpha = tmp_path / "catalog" / "alpha.yaml"
    text = alpha.read_text(encoding="utf-8")
    alpha.write_text(text.replace("Mean reward of", "Mean episode reward of"), encoding="utf-8")
    return tmp_path


def pending(root: Path) -> list[FileChange]:
    """The changes the next generate makes (create, update and delete among them)."""
    plan, _ = load_plan(root)
    assert plan is not None
    changes, _ = plan_changes(root, plan)
    assert {c.action for c in changes} == {"create", "update", "delete"}
    return changes


def fail_on_call(
    monkeypatch: pytest.MonkeyPatch, name: str, call: int, code: int
) -> Callable[[], int]:
    """Make ``writer.<name>`` raise ``OSError(code)`` on its ``call``-th call; return a counter."""
    original = getattr(writer, name)
    calls = 0

    def faulty(*args: Path) -> None:
        nonlocal calls
        calls += 1
        if calls == call:
            raise OSError(code, os.strerror(code))
        original(*args)

    monkeypatch.setattr(writer, name, faulty)
    return lambda: calls


def count_calls(tree: Path, monkeypatch: pytest.MonkeyPatch, name: str) -> int:
    """How often a clean transaction of ``tree``'s pending changes calls ``writer.<name>``."""
    copy = tree.with_name(f"{tree.name}-count")
    shutil.copytree(tree, copy)
    with monkeypatch.context() as patch:
        counter = fail_on_call(patch, name, 0, errno.EIO)
        apply_changes(copy, pending(copy))
        return counter()


@pytest.mark.parametrize(
    ("operation", "code"),
    [
        ("_write_new", errno.ENOSPC),
        ("_write_new", errno.EROFS),
        ("_rename", errno.EROFS),
        ("_rename", errno.ENOSPC),
    ],
)
def test_a_fault_on_any_call_leaves_the_tree_byte_identical_and_no_temp(
    tree: Path, monkeypatch: pytest.MonkeyPatch, operation: str, code: int
) -> None:
    """For every N: the N-th write or rename fails -> WriteError, the old tree back, no scratch.

    A failing rename in the commit phase (rename k of n) puts back the k-1
    files already renamed, from the backups kept until the commit completes.
    """
    changes = pending(tree)
    total = count_calls(tree, monkeypatch, operation)
    assert total >= 3
    before = snapshot(tree)
    for call in range(1, total + 1):
        with monkeypatch.context() as patch:
            fail_on_call(patch, operation, call, code)
            with pytest.raises(WriteError) as caught:
                apply_changes(tree, changes)
        message = caught.value.strerror
        assert f"{os.strerror(code)} (errno {code}); nothing was changed" in message, call
        assert message.startswith(("cannot write ", "cannot remove ")), message
        assert snapshot(tree) == before, f"call {call} of {operation}"
        assert scratch(tree) == [], f"call {call} of {operation}"


def test_a_link_that_is_not_supported_falls_back_to_a_rename(
    tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file system without hard links still gets the whole new tree."""
    fail_on_call(monkeypatch, "_link", 1, errno.EPERM)
    assert main(["generate", "--root", str(tree)]) == 0
    assert main(["check", "--root", str(tree)]) == 0
    assert scratch(tree) == []


@pytest.mark.parametrize(
    ("operation", "code", "shown", "call"),
    [
        ("_write_new", errno.ENOSPC, "cannot write", 2),
        # sorted: alpha's dashboard and its rules (updated), then the stale beta dashboard
        ("_rename", errno.EROFS, "cannot remove", 3),
    ],
)
def test_generate_exits_2_with_one_line_naming_the_path_and_the_reason(
    tree: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    *,
    operation: str,
    code: int,
    shown: str,
    call: int,
) -> None:
    """No traceback, no half tree: one line, the file, the reason; the rerun then completes."""
    before = snapshot(tree)
    capsys.readouterr()
    with monkeypatch.context() as patch:
        fail_on_call(patch, operation, call, code)
        assert main(["generate", "--root", str(tree)]) == 2
    err = capsys.readouterr().err.splitlines()
    errors = [line for line in err if line.startswith("error:")]
    assert len(errors) == 1, err
    assert errors[0].startswith(f"error: {shown} ")
    assert errors[0].endswith(f": {os.strerror(code)} (errno {code}); nothing was changed")
    path = errors[0].removeprefix(f"error: {shown} ").split(":")[0]
    assert path in {c.path for c in pending(tree)}
    assert snapshot(tree) == before
    assert main(["check", "--root", str(tree)]) == 1
    assert main(["generate", "--root", str(tree)]) == 0
    assert main(["check", "--root", str(tree)]) == 0


def test_the_last_rename_failing_restores_everything_already_committed(
    tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The last rename of the commit fails after every other change is in place: all undone."""
    changes = pending(tree)
    before = snapshot(tree)
    last = count_calls(tree, monkeypatch, "_rename")
    fail_on_call(monkeypatch, "_rename", last, errno.EROFS)
    with pytest.raises(WriteError, match=r"^cannot (write|remove) .*nothing was changed$"):
        apply_changes(tree, changes)
    assert snapshot(tree) == before


KILLER = """
import os, signal, sys
from codegen.generate import writer
from codegen.cli import main

name, when = sys.argv[1], int(sys.argv[2])
original = getattr(writer, name)
calls = 0

def killing(*args):
    global calls
    calls += 1
    if calls == when:
        os.kill(os.getpid(), signal.SIGKILL)
    return original(*args)

setattr(writer, name, killing)
sys.exit(main(["generate", "--root", sys.argv[3]]))
"""


@pytest.mark.parametrize(
    ("operation", "when"),
    [
        ("_write_new", 1),
        ("_write_new", 4),
        ("_rename", 1),
        ("_rename", 5),
        ("_rename", 9),
        ("_remove", 2),
    ],
)
def test_kill_9_at_any_step_leaves_nothing_check_does_not_flag_and_one_rerun_restores(
    tree: Path, operation: str, when: int
) -> None:
    """SIGKILL in the middle of a generate: ``check`` flags every file that is not current
    (old, new or scratch alike), and one more generate makes the tree current and clean."""
    repo = Path(__file__).resolve().parent.parent.parent
    killed = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(KILLER), operation, str(when), str(tree)],
        cwd=repo,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert killed.returncode == -9, killed.stderr
    assert main(["check", "--root", str(tree)]) == 1
    assert main(["generate", "--root", str(tree)]) == 0
    assert main(["check", "--root", str(tree)]) == 0
    assert scratch(tree) == []
