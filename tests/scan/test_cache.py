"""The scan cache: a warm scan is the cold scan's report, whatever the cache folder holds.

A warm re-run parses nothing; an edit gives exactly what a cold scan of the edited tree
gives, reusing what is known of the files it left alone; a corrupt, truncated, hostile or
foreign entry is ignored; a folder that cannot be written leaves scan without a cache and
with one note; the command line's ``--no-cache`` reads and writes nothing.
"""

from __future__ import annotations

import ast
import json
import os
import symtable
import tempfile
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from codegen.catalog.model import Catalog
from codegen.cli import main
from codegen.commands import scan as scan_command
from codegen.scan import cache as scan_cache
from codegen.scan.cache import ScanCache
from codegen.scan.calls import merge_calls, parse_scan_call
from codegen.scan.scanner import ScanReport, scan

TREE: dict[str, str] = {
    "pkg/__init__.py": "",
    "pkg/helpers.py": """\
        def metrics(batch):
            out = {"loss": 1.0, "kl_penalty": 2.0}
            out["grad_norm"] = float(batch)
            return out
        """,
    "pkg/train.py": """\
        import wandb
        from pkg.helpers import metrics

        def step(logger, batch, name):
            logger.log_metrics(metrics(batch), 0, prefix="train")
            wandb.log({f"train/{name}": 1.0, "train/reward": 2.0})
        """,
    "pkg/wrap.py": """\
        import wandb

        def emit(values):
            wandb.log(values)

        def report(x):
            emit({"train/total_step_time": x, "train/undeclared": x})
        """,
    "pkg/plain.py": """\
        import math

        def helper(values):
            return [math.log(v) for v in values if v]
        """,
}
"""A small tree: a helper's dict logged with a prefix, an f-string key, a wrapper, a file
logging nothing (checked for syntax only)."""


def _edit(name: str, text: str | None) -> Callable[[dict[str, str]], dict[str, str]]:
    def apply(files: dict[str, str]) -> dict[str, str]:
        changed = dict(files)
        if text is None:
            changed.pop(name, None)
        else:
            changed[name] = text
        return changed

    apply.__name__ = f"edit {name}"
    return apply


def _replace(name: str, old: str, new: str) -> Callable[[dict[str, str]], dict[str, str]]:
    def apply(files: dict[str, str]) -> dict[str, str]:
        changed = dict(files)
        if name in changed:
            changed[name] = changed[name].replace(old, new)
        return changed

    return apply


EDITS: list[Callable[[dict[str, str]], dict[str, str]]] = [
    _replace("pkg/helpers.py", '"loss"', '"bogus_loss"'),  # a key another file logs
    _edit("pkg/plain.py", "def broken(:\n    pass\n"),  # a file logging nothing breaks
    _edit("pkg/plain.py", TREE["pkg/plain.py"]),  # ... and is fixed
    _edit("pkg/train.py", "import wandb\nwandb.log({'train/loss': 1}\n"),  # a logging file breaks
    _edit("pkg/wrap.py", None),  # the wrapper goes
    _edit("pkg/more.py", "from pkg.wrap import emit\nemit({'train/reward': 1, 'train/new': 2})\n"),
    _replace(
        "pkg/wrap.py", '"train/undeclared": x', '"train/undeclared": x  # metric-catalog: ignore'
    ),
    _edit("pkg/deep.py", "x = " + "(" * 300 + ")" * 300 + "\n"),  # too nested to parse
    _edit("pkg/plain.py", "\x00"),  # a null byte
]
"""Edits of one file each: keys, syntax, files coming and going, an ignore comment."""


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")


def _sync(root: Path, files: dict[str, str]) -> None:
    """Make the tree under ``root/src`` hold exactly ``files``."""
    src = root / "src"
    for path in sorted(src.rglob("*.py")):
        if path.relative_to(src).as_posix() not in files:
            path.unlink()
    _write(src, files)


def _report(root: Path, catalog: Catalog, cache: ScanCache | None) -> ScanReport:
    return scan([root / "src"], catalog, cwd=root, root=root, cache=cache)


def _same(warm: ScanReport, cold: ScanReport) -> None:
    assert warm.to_json() == cold.to_json()
    assert warm.to_text() == cold.to_text()
    assert warm.summary() == cold.summary()
    assert warm.candidates == cold.candidates


@pytest.fixture
def forbid_parsing(monkeypatch: pytest.MonkeyPatch) -> Callable[[], None]:
    """Call it to make any parse or syntax check fail the test."""

    def refuse(*_args: object, **_kwargs: object) -> ast.Module:
        pytest.fail("the cached scan parsed a file")

    def forbid() -> None:
        monkeypatch.setattr(ast, "parse", refuse)
        monkeypatch.setattr(symtable, "symtable", refuse)

    return forbid


def test_a_warm_scan_gives_the_cold_report_and_parses_nothing(
    tmp_path: Path, evolution_catalog: Catalog, forbid_parsing: Callable[[], None]
) -> None:
    _sync(tmp_path, TREE)
    cold = _report(tmp_path, evolution_catalog, None)
    assert cold.calls >= 3
    assert cold.diagnostics
    folder = tmp_path / ".cache" / "scan"
    first = _report(tmp_path, evolution_catalog, ScanCache(folder, "catalog"))
    _same(first, cold)
    forbid_parsing()
    _same(_report(tmp_path, evolution_catalog, ScanCache(folder, "catalog")), cold)


def test_a_warm_scan_does_not_load_the_catalog(tmp_path: Path, evolution_catalog: Catalog) -> None:
    _sync(tmp_path, TREE)
    folder = tmp_path / ".cache" / "scan"
    cold = _report(tmp_path, evolution_catalog, ScanCache(folder, "catalog"))

    def unloadable() -> Catalog:
        pytest.fail("the catalog was loaded for a cached report")

    warm = scan(
        [tmp_path / "src"],
        unloadable,
        cwd=tmp_path,
        root=tmp_path,
        cache=ScanCache(folder, "catalog"),
    )
    _same(warm, cold)


def test_another_catalog_context_is_another_report(
    tmp_path: Path, evolution_catalog: Catalog, repo_catalog: Catalog
) -> None:
    _sync(tmp_path, TREE)
    folder = tmp_path / ".cache" / "scan"
    _report(tmp_path, evolution_catalog, ScanCache(folder, "evolution"))
    other = _report(tmp_path, repo_catalog, ScanCache(folder, "repo"))
    _same(other, _report(tmp_path, repo_catalog, None))


@settings(max_examples=25, derandomize=True)
@given(st.lists(st.sampled_from(range(len(EDITS))), min_size=1, max_size=5))
def test_after_any_edits_a_warm_scan_gives_what_a_cold_scan_gives(
    evolution_catalog: Catalog, edits: list[int]
) -> None:
    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory)
        folder = root / ".cache" / "scan"
        files = dict(TREE)
        _sync(root, files)
        _report(root, evolution_catalog, ScanCache(folder, "catalog"))
        for index in edits:
            files = EDITS[index](files)
            _sync(root, files)
            cold = _report(root, evolution_catalog, None)
            _same(_report(root, evolution_catalog, ScanCache(folder, "catalog")), cold)


def test_an_edit_checks_the_syntax_of_the_edited_file_only(
    tmp_path: Path, evolution_catalog: Catalog, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = {**TREE, **{f"pkg/plain_{i}.py": TREE["pkg/plain.py"] for i in range(5)}}
    _sync(tmp_path, files)
    folder = tmp_path / ".cache" / "scan"
    _report(tmp_path, evolution_catalog, ScanCache(folder, "catalog"))
    checked: list[str] = []
    check = symtable.symtable

    def counting(source: str | bytes, name: str, kind: str) -> symtable.SymbolTable:
        checked.append(source.decode() if isinstance(source, bytes) else source)
        return check(source, name, kind)

    monkeypatch.setattr(symtable, "symtable", counting)
    _sync(tmp_path, {**files, "pkg/plain_3.py": "import os\n"})
    _report(tmp_path, evolution_catalog, ScanCache(folder, "catalog"))
    assert checked == ["import os\n"]


def _cached_run(tmp_path: Path, catalog: Catalog) -> tuple[Path, ScanReport]:
    """The tree scanned once with a cache (its folder) and its cold report."""
    _sync(tmp_path, TREE)
    folder = tmp_path / ".cache" / "scan"
    _report(tmp_path, catalog, ScanCache(folder, "catalog"))
    return folder, _report(tmp_path, catalog, None)


def _tree_entry(folder: Path) -> Path:
    [entry] = folder.glob("tree-*.json")
    return entry


def _spoil_tree(how: str) -> Callable[[Path], None]:
    def spoil(folder: Path) -> None:
        entry = _tree_entry(folder)
        doc = json.loads(entry.read_text())
        report = doc["report"]
        if how == "truncated":
            entry.write_bytes(entry.read_bytes()[: entry.stat().st_size // 2])
            return
        if how == "foreign-format":
            doc["format"] = 999
            report["diagnostics"] = []
        elif how == "count-a-string":
            report["files"] = "12"
        elif how == "negative-count":
            report["calls"] = -1
        elif how == "severity-unknown":
            report["diagnostics"][0][1] = "fatal"
        elif how == "diagnostic-short":
            report["diagnostics"][0] = report["diagnostics"][0][:3]
        elif how == "line-a-bool":
            report["diagnostics"][0][4] = True
        elif how == "not-an-object":
            doc = [doc]  # type: ignore[assignment]
        entry.write_text(json.dumps(doc))

    return spoil


def _spoil_facts(how: str) -> Callable[[Path], None]:
    def spoil(folder: Path) -> None:
        # The report goes: a scan must fall back on the file facts (an edit's case).
        _tree_entry(folder).unlink()
        facts_path = folder / "files.json"
        doc = json.loads(facts_path.read_text())
        facts = doc["facts"]
        for name in list(facts):
            if how == "lines-strings" and name.startswith("l"):
                facts[name] = ["1"]
            elif how == "lines-unsorted" and name.startswith("l"):
                facts[name] = [5, 2]
            elif how == "verdict-a-number" and name.startswith("p"):
                facts[name] = 7
            elif how == "verdict-bad-line" and name.startswith("p"):
                facts[name] = [0, 1, "x"]
        if how == "foreign-code":
            doc["code"] = "another version of scan"
            for name in facts:
                facts[name] = [] if name.startswith("l") else [1, 1, "forged"]
        facts_path.write_text(json.dumps(doc))

    return spoil


def _replace_with(kind: str) -> Callable[[Path], None]:
    def spoil(folder: Path) -> None:
        for entry in [_tree_entry(folder), folder / "files.json"]:
            entry.unlink()
            if kind == "folder":
                entry.mkdir()
            elif kind == "fifo":
                os.mkfifo(entry)
            elif kind == "dangling-link":
                entry.symlink_to(folder / "nowhere")
            elif kind == "link-to-a-device":
                entry.symlink_to("/dev/zero")
            elif kind == "garbage":
                entry.write_bytes(b"\xff\xfe{{{" * 100)

    return spoil


@pytest.mark.parametrize(
    "spoil",
    [
        *(
            pytest.param(_spoil_tree(how), id=f"report-{how}")
            for how in (
                "truncated",
                "foreign-format",
                "count-a-string",
                "negative-count",
                "severity-unknown",
                "diagnostic-short",
                "line-a-bool",
                "not-an-object",
            )
        ),
        *(
            pytest.param(_spoil_facts(how), id=f"facts-{how}")
            for how in (
                "lines-strings",
                "lines-unsorted",
                "verdict-a-number",
                "verdict-bad-line",
                "foreign-code",
            )
        ),
        *(
            pytest.param(_replace_with(kind), id=f"entry-{kind}")
            for kind in ("folder", "fifo", "dangling-link", "link-to-a-device", "garbage")
        ),
    ],
)
def test_a_spoilt_cache_entry_is_ignored_and_the_scan_is_done_again(
    tmp_path: Path, evolution_catalog: Catalog, spoil: Callable[[Path], None]
) -> None:
    folder, cold = _cached_run(tmp_path, evolution_catalog)
    spoil(folder)
    _same(_report(tmp_path, evolution_catalog, ScanCache(folder, "catalog")), cold)


def test_an_oversized_entry_is_not_read(
    tmp_path: Path, evolution_catalog: Catalog, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder, cold = _cached_run(tmp_path, evolution_catalog)
    monkeypatch.setattr(scan_cache, "_MAX_TREE_BYTES", 10)
    monkeypatch.setattr(scan_cache, "_MAX_FACTS_BYTES", 10)
    forged = json.loads(_tree_entry(folder).read_text())
    forged["report"]["diagnostics"] = []
    _tree_entry(folder).write_text(json.dumps(forged))  # would change the result, if read
    _same(_report(tmp_path, evolution_catalog, ScanCache(folder, "catalog")), cold)


@pytest.fixture
def unwritable(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """Every write of the cache fails as on a read-only file system; the paths tried."""
    tried: list[Path] = []

    def read_only(path: Path, _text: str) -> None:
        tried.append(path)
        raise OSError(30, "Read-only file system")

    monkeypatch.setattr(scan_cache, "write_atomic", read_only)
    return tried


def test_a_read_only_cache_folder_leaves_scan_without_a_cache_and_one_note(
    tmp_path: Path, evolution_catalog: Catalog, unwritable: list[Path]
) -> None:
    _sync(tmp_path, TREE)
    cache = ScanCache(tmp_path / ".cache" / "scan", "catalog")
    _same(_report(tmp_path, evolution_catalog, cache), _report(tmp_path, evolution_catalog, None))
    assert len(unwritable) == 1  # tried once, then left alone
    assert cache.note is not None
    assert "cannot be written (Read-only file system)" in cache.note
    assert "--no-cache" in cache.note


@pytest.mark.parametrize("blocker", ["a file", "a link out"])
def test_a_cache_folder_that_cannot_be_made_leaves_scan_without_a_cache(
    tmp_path: Path, evolution_catalog: Catalog, blocker: str
) -> None:
    _sync(tmp_path, TREE)
    cache_dir = tmp_path / ".cache"
    if blocker == "a file":
        cache_dir.write_text("not a folder")
    else:
        (tmp_path / "elsewhere").mkdir()
        cache_dir.symlink_to(tmp_path / "elsewhere" / "missing" / "x")
    cache = ScanCache(cache_dir / "scan", "catalog")
    _same(_report(tmp_path, evolution_catalog, cache), _report(tmp_path, evolution_catalog, None))
    assert cache.note is not None


def test_a_missing_cache_folder_is_made_and_written_with_no_note(
    tmp_path: Path, evolution_catalog: Catalog
) -> None:
    _sync(tmp_path, TREE)
    cache = ScanCache(tmp_path / "a" / "b" / "scan", "catalog")
    _report(tmp_path, evolution_catalog, cache)
    assert cache.note is None
    assert sorted(p.name for p in (tmp_path / "a" / "b" / "scan").iterdir())[0] == "files.json"


def test_the_cache_keeps_at_most_its_cap_of_reports_and_file_facts(
    tmp_path: Path, evolution_catalog: Catalog, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(scan_cache, "MAX_TREES", 2)
    monkeypatch.setattr(scan_cache, "MAX_FILE_FACTS", 6)
    _sync(tmp_path, TREE)
    folder = tmp_path / ".cache" / "scan"
    for name in TREE:  # each file on its own: another slot each
        path = tmp_path / "src" / name
        scan([path], evolution_catalog, cwd=tmp_path, cache=ScanCache(folder, "catalog"))
    assert len(list(folder.glob("tree-*.json"))) == 2
    facts = json.loads((folder / "files.json").read_text())["facts"]
    assert 0 < len(facts) <= 6


def test_a_scan_without_a_cache_writes_nothing(tmp_path: Path, evolution_catalog: Catalog) -> None:
    _sync(tmp_path, TREE)
    _report(tmp_path, evolution_catalog, None)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["src"]


def _project(tmp_path: Path, cache_dir: str | None = None) -> Path:
    catalog = Path(__file__).parents[1] / "fixtures" / "evolution" / "catalog"
    (tmp_path / "catalog").mkdir(parents=True)
    for path in catalog.glob("*.yaml"):
        (tmp_path / "catalog" / path.name).write_bytes(path.read_bytes())
    table = '[tool.metric-catalog]\ncatalog = ["catalog/*.yaml"]\n'
    if cache_dir is not None:
        table += f'cache-dir = "{cache_dir}"\n'
    (tmp_path / "pyproject.toml").write_text(table, encoding="utf-8")
    _sync(tmp_path, TREE)
    return tmp_path


def _cli(capsys: pytest.CaptureFixture[str], root: Path, *flags: str) -> tuple[int, str, str]:
    code = main(["scan", "--root", str(root), "--format", "json", *flags, str(root / "src")])
    out, err = capsys.readouterr()
    return code, out, err


def test_the_command_caches_in_the_configured_cache_dir_and_a_rerun_loads_no_catalog(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _project(tmp_path, cache_dir="build-cache/mc")
    first = _cli(capsys, root)
    assert (
        sorted(p.name for p in (root / "build-cache" / "mc" / "scan").iterdir())[0] == "files.json"
    )
    monkeypatch.setattr(scan_command, "load_or_report", lambda *_a, **_k: pytest.fail("loaded"))
    assert _cli(capsys, root) == first


def test_the_command_rescans_when_the_catalog_changes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _project(tmp_path)
    _code, out, _ = _cli(capsys, root)
    grpo = root / "catalog" / "grpo.yaml"
    grpo.write_text(grpo.read_text().replace("logger_key: loss", "logger_key: loss_renamed"))
    assert _cli(capsys, root) == _cli(capsys, root, "--no-cache")
    assert _cli(capsys, root)[1] != out


def test_no_cache_reads_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _project(tmp_path)
    cold = _cli(capsys, root, "--no-cache")
    assert not (root / ".cache").exists()
    _cli(capsys, root)
    _tree_entry(root / ".cache" / "metric-catalog" / "scan").write_text("{}")
    assert _cli(capsys, root, "--no-cache") == cold


def test_the_command_notes_once_when_the_cache_cannot_be_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], unwritable: list[Path]
) -> None:
    root = _project(tmp_path)
    code, out, err = _cli(capsys, root)
    assert (code, out) == _cli(capsys, root, "--no-cache")[:2]
    assert err.count("note: the scan cache in") == 1


def test_a_cache_dir_linked_out_of_the_root_is_not_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    root = _project(tmp_path / "project")
    (root / ".cache").symlink_to(outside)
    code, out, err = _cli(capsys, root)
    assert (code, out) == _cli(capsys, root, "--no-cache")[:2]
    assert list(outside.iterdir()) == []
    assert err.count("note: scanned without the cache") == 1


_DEEP = "# too " + "deep"  # not in this file's text: pytest parses it too


def _too_deep(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make a file holding :data:`_DEEP` a tree too deep to build (as Python 3.12+ refuses
    some that its syntax check passes): a limit of this process, not of the bytes."""
    parse = ast.parse

    def too_deep(source: str | bytes, *args: object, **kwargs: object) -> ast.Module:
        if _DEEP.encode() in (source if isinstance(source, bytes) else source.encode()):
            raise RecursionError("maximum recursion depth exceeded during ast construction")
        return parse(source, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(ast, "parse", too_deep)


_DEEP_TREE = {
    "helpers.py": _DEEP + '\ndef metrics():\n    return {"loss": 1}\n',
    "train.py": 'import wandb\nwandb.log({"train/loss": 1})\n',
}
_IMPORTING = 'from helpers import metrics\nlog_metrics(metrics(), 0, prefix="train")\n'


def test_a_file_known_to_parse_that_cannot_be_built_when_needed_is_reported(
    tmp_path: Path, evolution_catalog: Catalog, monkeypatch: pytest.MonkeyPatch
) -> None:
    _too_deep(monkeypatch)
    folder = tmp_path / ".cache" / "scan"
    _sync(tmp_path, _DEEP_TREE)  # helpers.py: syntax-checked only, known to parse
    _report(tmp_path, evolution_catalog, ScanCache(folder, "catalog"))
    _sync(tmp_path, {**_DEEP_TREE, "train.py": _IMPORTING})  # now its tree is needed
    cold = _report(tmp_path, evolution_catalog, None)
    assert [d.code for d in cold.diagnostics if d.code == "SCAN_SYNTAX"] == ["SCAN_SYNTAX"]
    _same(_report(tmp_path, evolution_catalog, ScanCache(folder, "catalog")), cold)


def test_a_tree_too_deep_for_this_process_is_not_kept_as_a_syntax_error(
    tmp_path: Path, evolution_catalog: Catalog
) -> None:
    folder = tmp_path / ".cache" / "scan"
    with pytest.MonkeyPatch.context() as patch:
        _too_deep(patch)
        _sync(tmp_path, {**_DEEP_TREE, "train.py": _IMPORTING})
        _report(tmp_path, evolution_catalog, ScanCache(folder, "catalog"))
    _sync(tmp_path, _DEEP_TREE)  # a process that builds it: no finding, cold or warm
    cold = _report(tmp_path, evolution_catalog, None)
    assert not [d for d in cold.diagnostics if d.code == "SCAN_SYNTAX"]
    _same(_report(tmp_path, evolution_catalog, ScanCache(folder, "catalog")), cold)


_TRACKER_CALL = (parse_scan_call({"call": "tracker.log", "metrics": 0}),)
_TRACKER = {"pkg/tracked.py": "def go(tracker):\n    tracker.log({'train/reward': 1})\n"}


@pytest.mark.parametrize(
    "settings_of",
    [
        pytest.param(lambda root: {"calls": merge_calls(_TRACKER_CALL)}, id="calls"),
        pytest.param(lambda root: {"unlogged": False}, id="unlogged"),
        pytest.param(lambda root: {"cwd": root / "src"}, id="working-folder"),
        pytest.param(lambda root: {"root": None}, id="project-root"),
    ],
)
def test_another_way_of_scanning_is_another_report(
    tmp_path: Path,
    evolution_catalog: Catalog,
    settings_of: Callable[[Path], dict[str, object]],
) -> None:
    _sync(tmp_path, {**TREE, **_TRACKER})
    folder = tmp_path / ".cache" / "scan"
    _report(tmp_path, evolution_catalog, ScanCache(folder, "catalog"))
    changed: dict[str, object] = {"cwd": tmp_path, "root": tmp_path, **settings_of(tmp_path)}
    cold = scan([tmp_path / "src"], evolution_catalog, **changed)  # type: ignore[arg-type]
    cache = ScanCache(folder, "catalog")
    warm = scan([tmp_path / "src"], evolution_catalog, cache=cache, **changed)  # type: ignore[arg-type]
    _same(warm, cold)
