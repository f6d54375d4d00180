"""Catalog folders holding what is not a regular file: FIFOs, devices, loops, folders, links out.

``diff --against DIR`` reads regular files only and says, one warning line per
file, what it skipped or refused; ``validate`` and ``generate`` refuse such an
entry with a positioned error. Nothing opens a FIFO for reading (it would wait
for a writer for ever), so each case runs in a subprocess with a timeout.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent.parent
FIXTURES = REPO / "tests" / "fixtures" / "generate"


def codegen(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``python -m codegen ARGS --root ROOT`` in a subprocess (a hang fails, it does not block)."""
    return subprocess.run(
        [sys.executable, "-m", "codegen", *args, "--root", str(root)],
        capture_output=True,
        text=True,
        cwd=REPO,
        check=False,
        timeout=120,
    )


def catalog_folder(root: Path) -> Path:
    """``root/catalog`` holding the fixture catalog files."""
    folder = root / "catalog"
    folder.mkdir(parents=True)
    for source in sorted(FIXTURES.glob("*.yaml")):
        shutil.copy(source, folder / source.name)
    return folder


def make_fifo(path: Path, outside: Path) -> None:
    os.mkfifo(path)


def make_loop(path: Path, outside: Path) -> None:
    path.symlink_to(path.name)


def make_device(path: Path, outside: Path) -> None:
    try:
        os.mknod(path, stat.S_IFCHR | 0o600, os.makedev(1, 5))  # what /dev/zero is
    except PermissionError:
        pytest.skip("creating a device node needs root")


def make_folder(path: Path, outside: Path) -> None:
    path.mkdir()
    (path / "inner.yaml").write_text("owner: x\n", encoding="utf-8")


def make_link_out(path: Path, outside: Path) -> None:
    secret = outside / "secret.yaml"
    secret.write_text((FIXTURES / "beta.yaml").read_text(encoding="utf-8"), encoding="utf-8")
    path.symlink_to(secret)


def make_dev_zero(path: Path, outside: Path) -> None:
    path.symlink_to("/dev/zero")


HOSTILE: dict[str, tuple[Callable[[Path, Path], None], str]] = {
    "fifo": (make_fifo, "is a FIFO (named pipe), not a regular file; skipped"),
    "loop": (make_loop, "is a symlink loop; skipped"),
    "device": (make_device, "is a character device, not a regular file; skipped"),
    "folder": (make_folder, "is a directory, not a regular file; skipped"),
    "link-out": (make_link_out, ", outside "),
    "dev-zero": (make_dev_zero, "is a symlink to /dev/zero, outside "),
}


@pytest.mark.parametrize("kind", sorted(HOSTILE))
@pytest.mark.parametrize("layout", ["checkout", "catalog-folder"])
def test_diff_against_a_directory_reads_regular_files_only_and_names_what_it_skipped(
    tmp_path: Path, kind: str, layout: str
) -> None:
    """The baseline holds the same catalog plus a hostile ``zz.yaml``: a warning, no change."""
    work, base, outside = tmp_path / "work", tmp_path / "base", tmp_path / "outside"
    outside.mkdir()
    catalog_folder(work)
    baseline = catalog_folder(base)
    make, expected = HOSTILE[kind]
    make(baseline / "zz.yaml", outside)
    against = base if layout == "checkout" else baseline

    proc = codegen(work, "diff", "--against", str(against))

    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    warnings = [line for line in proc.stderr.splitlines() if line.startswith("warning: --against")]
    assert len(warnings) == 1, proc.stderr
    assert warnings[0].startswith(f"warning: --against: {baseline / 'zz.yaml'} ")
    assert expected in warnings[0]
    if kind in {"link-out", "dev-zero"}:
        assert warnings[0].endswith("; refused")
    assert "0 added, 0 removed, 0 renamed, 0 changed" in proc.stdout


def test_diff_against_a_directory_of_nothing_but_special_files_is_a_usage_error(
    tmp_path: Path,
) -> None:
    """Every baseline file skipped: exit 2 (nothing to compare), after a warning per file."""
    work, base = tmp_path / "work", tmp_path / "base"
    catalog_folder(work)
    (base / "catalog").mkdir(parents=True)
    os.mkfifo(base / "catalog" / "fifo.yaml")
    (base / "catalog" / "loop.yaml").symlink_to("loop.yaml")
    proc = codegen(work, "diff", "--against", str(base))
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.count("warning: --against") == 2
    assert "nothing to compare with" in proc.stderr


@pytest.mark.parametrize("kind", ["fifo", "loop", "device", "dev-zero"])
@pytest.mark.parametrize("command", ["validate", "generate"])
def test_a_catalog_entry_that_is_not_a_regular_file_is_a_positioned_error(
    tmp_path: Path, kind: str, command: str
) -> None:
    """validate and generate name the entry (``catalog/zz.yaml: error[...]``), write nothing."""
    root, outside = tmp_path / "proj", tmp_path / "outside"
    outside.mkdir()
    make, _ = HOSTILE[kind]
    make(catalog_folder(root) / "zz.yaml", outside)
    proc = codegen(root, command)
    assert proc.returncode == 1, proc.stderr
    report = proc.stdout + proc.stderr  # validate reports on stdout, generate on stderr
    assert "Traceback" not in report
    assert "catalog/zz.yaml: error[FILE_UNREADABLE]" in report
    reason = "a symlink loop" if kind == "loop" else "not a regular file"
    assert reason in report
    assert not (root / "src").exists()
