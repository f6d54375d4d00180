"""``init`` in a hostile project: links out of it, a FIFO where pyproject.toml should be.

What an attacker controls: the project folder's entries (``pyproject.toml``, the package
folder ``init`` derives from ``[project] name``, the catalog folder), each of which may be
a symlink leading outside the project, a FIFO or a device. ``init`` must refuse with a
message naming the entry, write nothing, and never follow a link out of the project.
Each run is a child process with a deadline (a FIFO read would block for ever) and a
memory bound of 200 MiB.
"""

from __future__ import annotations

import os
from pathlib import Path

from tests.hostile_runs import run_cli

PROJECT = '[project]\nname = "evil"\nversion = "0"\n'
MEMORY_MIB = 200


def files_under(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file())


def test_a_pyproject_linked_outside_the_project_is_neither_replaced_nor_written(
    tmp_path: Path,
) -> None:
    project, outside = tmp_path / "proj", tmp_path / "outside"
    project.mkdir()
    outside.mkdir()
    (outside / "pyproject.toml").write_text(PROJECT, encoding="utf-8")
    (project / "pyproject.toml").symlink_to("../outside/pyproject.toml")

    run = run_cli("init", "--root", str(project), tmp=tmp_path, deadline=60)

    assert run.code == 2
    assert "pyproject.toml is a symlink to '../outside/pyproject.toml'" in run.stderr
    assert (project / "pyproject.toml").is_symlink()
    assert (outside / "pyproject.toml").read_text(encoding="utf-8") == PROJECT
    assert files_under(outside) == ["pyproject.toml"]
    assert run.peak_mib < MEMORY_MIB


def test_a_package_folder_linked_outside_the_project_gets_no_file(tmp_path: Path) -> None:
    project, outside = tmp_path / "proj", tmp_path / "outside"
    (outside / "pkg").mkdir(parents=True)
    project.mkdir()
    (project / "pyproject.toml").write_text(PROJECT, encoding="utf-8")
    (project / "evil").symlink_to("../outside/pkg")

    run = run_cli("init", "--root", str(project), tmp=tmp_path, deadline=60)

    assert run.code == 2
    assert "evil is a symlink to '../outside/pkg'" in run.stderr
    assert "outside the project root" in run.stderr
    assert files_under(outside) == []
    # Nothing was written inside either: the refusal comes before the first write.
    assert (project / "pyproject.toml").read_text(encoding="utf-8") == PROJECT
    assert run.peak_mib < MEMORY_MIB


def test_a_fifo_named_pyproject_toml_is_refused_without_blocking(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    os.mkfifo(project / "pyproject.toml")

    run = run_cli("init", "--root", str(project), tmp=tmp_path, deadline=30)

    assert run.code == 2
    assert "pyproject.toml: is a FIFO (named pipe), not a regular file" in run.stderr
    assert sorted(p.name for p in project.iterdir()) == ["pyproject.toml"]
    assert run.peak_mib < MEMORY_MIB


def test_a_pyproject_linked_inside_the_project_keeps_its_link(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    (project / "config").mkdir(parents=True)
    (project / "config" / "pyproject.toml").write_text(PROJECT, encoding="utf-8")
    (project / "pyproject.toml").symlink_to("config/pyproject.toml")

    run = run_cli("init", "--root", str(project), tmp=tmp_path, deadline=60)

    assert run.code == 0, run.stderr
    assert (project / "pyproject.toml").is_symlink()
    assert "[tool.metric-catalog]" in (project / "config" / "pyproject.toml").read_text()
