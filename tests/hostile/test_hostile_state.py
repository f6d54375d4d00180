"""A hostile or changing state around ``generate``: the manifest, the catalog during the run.

A corrupt or crafted no-op manifest is ignored (a full run follows), never
trusted and never a traceback; a catalog that vanishes mid-run is an error that
writes nothing; a catalog file changed between read and write never leaves a
manifest that calls stale outputs current.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from codegen.catalog import pipeline
from codegen.catalog.loader import LoadedFile
from codegen.cli import main
from codegen.config import config_for_root
from codegen.generate import manifest

FIXTURES = Path(__file__).parent.parent / "fixtures" / "generate"
GENERATED = "src/metric_catalog/generated"
CACHED = "catalog and generator unchanged since the last run"


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A project with the fixture catalog, generated once (its manifest written)."""
    root = tmp_path / "proj"
    (root / "catalog").mkdir(parents=True)
    for source in sorted(FIXTURES.glob("*.yaml")):
        shutil.copy(source, root / "catalog" / source.name)
    assert main(["generate", "--root", str(root)]) == 0
    return root


def manifest_path(root: Path) -> Path:
    return root / config_for_root(root).manifest_path


def crafted(root: Path, **fields: object) -> str:
    """A manifest with the right format and inputs (so it is looked at) and ``fields`` on top."""
    doc = json.loads(manifest_path(root).read_text(encoding="utf-8"))
    doc.update(fields)
    return json.dumps(doc)


ZERO = "0" * 64
HOSTILE: dict[str, Callable[[Path], str | bytes]] = {
    "not JSON": lambda root: "{not json",
    "binary": lambda root: b"\xff\xfe\x00garbage",
    "a JSON list": lambda root: "[1, 2, 3]",
    "deeply nested": lambda root: "[" * 100_000 + "]" * 100_000,
    "huge": lambda root: '{"format": 1, "pad": "' + "x" * (17 * 1024 * 1024) + '"}',
    "outputs a list": lambda root: crafted(root, outputs=["a", "b"]),
    "digest an int": lambda root: crafted(root, outputs={f"{GENERATED}/alpha.py": 1}),
    "managed_dirs ints": lambda root: crafted(root, managed_dirs=[1, 2]),
    "managed_dirs a string": lambda root: crafted(root, managed_dirs="src"),
    "report an object": lambda root: crafted(root, report={"x": 1}),
    "output outside the root": lambda root: crafted(root, outputs={"../../etc/passwd": ZERO}),
    "output absolute": lambda root: crafted(root, outputs={"/dev/zero": ZERO}),
    "output dotdot inside": lambda root: crafted(
        root, outputs={f"{GENERATED}/../../../../etc/passwd": ZERO}
    ),
    "output a FIFO": lambda root: crafted(root, outputs={f"{GENERATED}/fifo.py": ZERO}),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_a_corrupt_or_crafted_manifest_is_ignored_and_a_full_run_follows(
    tree: Path, case: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """generate renders again (exit 0, no traceback), then writes a manifest of its own."""
    os.mkfifo(tree / GENERATED / "fifo.py")
    content = HOSTILE[case](tree)
    path = manifest_path(tree)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    capsys.readouterr()

    assert main(["generate", "--root", str(tree)]) == 0
    out = capsys.readouterr().out
    assert CACHED not in out
    assert manifest.load_if_current(tree) is not None
    assert main(["generate", "--root", str(tree)]) == 0
    assert CACHED in capsys.readouterr().out


@pytest.mark.parametrize("kind", ["fifo", "folder", "link-out"])
def test_a_manifest_that_is_not_a_regular_file_inside_the_root_is_ignored(
    tree: Path, kind: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A FIFO (never opened), a folder, or a link to a manifest outside: a full run, no hang."""
    path = manifest_path(tree)
    outside = tree.parent / "outside.json"
    shutil.copy(path, outside)
    path.unlink()
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "folder":
        path.mkdir()
    else:
        path.symlink_to(outside)
    assert manifest.load_if_current(tree) is None
    capsys.readouterr()
    code = main(["generate", "--root", str(tree)])
    assert CACHED not in capsys.readouterr().out
    assert code == 0


def test_a_catalog_folder_that_vanishes_mid_run_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The folder is removed after the first file is read: errors at the paths, exit 1."""
    root = tmp_path / "proj"
    (root / "catalog").mkdir(parents=True)
    for source in sorted(FIXTURES.glob("*.yaml")):
        shutil.copy(source, root / "catalog" / source.name)
    original = pipeline.load_file

    def vanishing(path: Path, display: str) -> LoadedFile:
        loaded = original(path, display)
        shutil.rmtree(root / "catalog", ignore_errors=True)
        return loaded

    monkeypatch.setattr(pipeline, "load_file", vanishing)
    assert main(["generate", "--root", str(root)]) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert "error[FILE_UNREADABLE]" in err
    assert "nothing written" in err
    assert sorted(p.name for p in root.iterdir()) == []


def test_a_catalog_file_changed_between_read_and_write_is_rendered_again_next_run(
    tree: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The manifest fingerprints what was read, so the next run does not trust stale outputs."""
    alpha = tree / "catalog" / "alpha.yaml"
    text = alpha.read_text(encoding="utf-8")
    alpha.write_text(text.replace("Mean reward of", "Mean episode reward of"), encoding="utf-8")
    original = pipeline.load_file

    def racing(path: Path, display: str) -> LoadedFile:
        loaded = original(path, display)
        if path.name == "alpha.yaml":  # an editor saves again while generate runs
            path.write_text(text.replace("Mean reward of", "Mean step reward of"), "utf-8")
        return loaded

    monkeypatch.setattr(pipeline, "load_file", racing)
    assert main(["generate", "--root", str(tree)]) == 0
    monkeypatch.undo()
    capsys.readouterr()
    assert main(["check", "--root", str(tree)]) == 1  # the outputs hold the bytes read first
    assert main(["generate", "--root", str(tree)]) == 0
    assert CACHED not in capsys.readouterr().out
    assert main(["check", "--root", str(tree)]) == 0
