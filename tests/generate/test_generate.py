"""``python -m codegen generate`` and ``check`` against fixture catalogs in a temporary tree."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import yaml

from codegen.catalog.model import Catalog
from codegen.catalog.pipeline import load_and_check
from codegen.cli import main
from codegen.generate.plan import MANAGED_DIRS, PlanError, render_all
from codegen.generate.writer import is_generated

FIXTURES = Path(__file__).parents[1] / "fixtures" / "generate"
GENERATED = "src/metric_catalog/generated"


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A repository root whose catalog/ holds the fixture catalog files."""
    (tmp_path / "catalog").mkdir()
    for source in sorted(FIXTURES.glob("*.yaml")):
        shutil.copy(source, tmp_path / "catalog" / source.name)
    return tmp_path


def run(*args: str) -> int:
    """Run a codegen command in-process and return its exit code."""
    return main(list(args))


def generated_files(root: Path) -> dict[str, int]:
    """Every generated file (the managed folders' and the schema copy), with its mtime in ns."""
    found: dict[str, int] = {}
    for directory in MANAGED_DIRS:
        for path in sorted((root / directory).rglob("*")):
            if path.is_file():
                found[path.relative_to(root).as_posix()] = path.stat().st_mtime_ns
    schema = root / "catalog" / "catalog.schema.json"
    if schema.is_file():
        found["catalog/catalog.schema.json"] = schema.stat().st_mtime_ns
    return found


def import_in_subprocess(root: Path, code: str) -> str:
    """Run ``code`` in a fresh interpreter with ``load(module)`` importing a generated file."""
    prelude = textwrap.dedent(
        f"""
        import importlib.util, sys
        from metric_catalog import vocabulary

        def load(module):
            path = {str(root / GENERATED)!r} + "/" + module + ".py"
            spec = importlib.util.spec_from_file_location("fixture_" + module, path)
            loaded = importlib.util.module_from_spec(spec)
            sys.modules[spec.name] = loaded
            spec.loader.exec_module(loaded)
            return loaded
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", prelude + textwrap.dedent(code)],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_generate_writes_one_module_per_owner_and_reports_counts(
    tree: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A first run writes every module and prints a one-line summary."""
    assert run("generate", "--root", str(tree)) == 0
    modules = sorted(p.name for p in (tree / GENERATED).glob("*.py"))
    # One module per owner, and the loops' W&B definitions beside them.
    assert modules == ["alpha.py", "beta.py", "injection.py", "wandb_metrics.py"]
    out = capsys.readouterr().out.strip().splitlines()
    assert len(out) == 1
    assert out[0].startswith("generate: ")
    assert out[0].endswith(" written, 0 unchanged, 0 removed")


def test_generated_modules_register_their_rows_in_declaration_order(tree: Path) -> None:
    """Importing a generated module registers its rows, in YAML order, once."""
    assert run("generate", "--root", str(tree)) == 0
    out = import_in_subprocess(
        tree,
        """
        alpha = load("alpha")
        load("beta")
        print([row.logger_key for row in vocabulary.teed_metrics()])
        print([row.name for row in vocabulary.recorded_metrics()])
        teed = vocabulary.teed_metrics()
        print(alpha.TEED == teed, alpha.FIXTURE_REWARD_MEAN_KEY, alpha.TEED[2].prefix)
        """,
    )
    assert out.splitlines() == [
        "['reward', 'tokens', 'step_time']",
        "['rl.fixture.batch.duration', 'rl.fixture.queue.depth', 'rl.fixture.beta.duration']",
        "True reward timing/train",
    ]


def test_injected_text_comes_back_exactly_as_yaml_parsed_it(tree: Path) -> None:
    """Quotes, backslashes, newlines, Unicode and template syntax survive as plain data."""
    assert run("generate", "--root", str(tree)) == 0
    source = yaml.safe_load((tree / "catalog" / "injection.yaml").read_text(encoding="utf-8"))
    out = import_in_subprocess(
        tree,
        """
        import json
        module = load("injection")
        print(json.dumps({
            "doc": module.__doc__,
            "rows": [[r.logger_key, r.description] for r in module.TEED],
        }))
        """,
    )
    loaded = json.loads(out)
    assert loaded["rows"] == [[row["logger_key"], row["description"]] for row in source["teed"]]
    # The owner description reaches the module docstring as prose (whitespace re-flowed).
    assert " ".join(source["description"].split()) in " ".join(loaded["doc"].split())


def test_unchanged_run_rewrites_nothing(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A second run with nothing changed touches no file (every mtime_ns stays)."""
    assert run("generate", "--root", str(tree)) == 0
    before = generated_files(tree)
    capsys.readouterr()
    assert run("generate", "--root", str(tree), "--no-cache") == 0
    assert generated_files(tree) == before
    assert (
        capsys.readouterr().out.strip()
        == f"generate: 0 written, {len(before)} unchanged, 0 removed"
    )
    assert run("generate", "--root", str(tree)) == 0  # the manifest's no-op path
    assert generated_files(tree) == before
    assert capsys.readouterr().out.startswith(f"generate: 0 written, {len(before)} unchanged")


def test_only_the_changed_module_is_rewritten(tree: Path) -> None:
    """Editing one catalog file rewrites its outputs and leaves the other owners' alone."""
    assert run("generate", "--root", str(tree)) == 0
    before = generated_files(tree)
    beta = tree / "catalog" / "beta.yaml"
    beta.write_text(beta.read_text().replace("one beta call", "one beta request"))
    assert run("generate", "--root", str(tree)) == 0
    after = generated_files(tree)
    changed = {path for path in before if before[path] != after[path]}
    assert f"{GENERATED}/beta.py" in changed
    assert f"{GENERATED}/alpha.py" not in changed
    assert f"{GENERATED}/injection.py" not in changed


def test_deleting_a_catalog_file_removes_its_outputs(
    tree: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Outputs of a deleted catalog file are removed; the others stay."""
    assert run("generate", "--root", str(tree)) == 0
    (tree / "catalog" / "beta.yaml").unlink()
    capsys.readouterr()
    assert run("generate", "--root", str(tree)) == 0
    assert not (tree / GENERATED / "beta.py").exists()
    assert (tree / GENERATED / "alpha.py").exists()
    assert not any("beta" in path for path in generated_files(tree))
    assert capsys.readouterr().out.strip().endswith(" removed")
    assert " 0 removed" not in capsys.readouterr().out


@pytest.mark.parametrize(
    "hand_written",
    [
        f"{GENERATED}/__init__.py",
        f"{GENERATED}/helpers.py",
        "docs/metrics/guide.md",
        "docs/dashboards/custom.json",
    ],
)
def test_hand_written_files_in_managed_folders_are_never_touched(
    tree: Path, hand_written: str
) -> None:
    """A file without the generated marker survives generate (bytes and mtime)."""
    path = tree / hand_written
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text('{"title": "mine"}\n' if path.suffix == ".json" else "# mine\n")
    mtime = path.stat().st_mtime_ns
    assert run("generate", "--root", str(tree)) == 0
    assert run("generate", "--root", str(tree)) == 0
    assert path.read_text() in {'{"title": "mine"}\n', "# mine\n"}
    assert path.stat().st_mtime_ns == mtime
    assert run("check", "--root", str(tree)) == 0


def test_a_hand_written_file_at_a_generated_path_is_refused(
    tree: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """generate will not overwrite an unmarked file where a module should go; nothing is written."""
    target = tree / GENERATED / "alpha.py"
    target.parent.mkdir(parents=True)
    target.write_text("# my own alpha\n")
    assert run("generate", "--root", str(tree)) == 1
    assert target.read_text() == "# my own alpha\n"
    assert not (tree / GENERATED / "beta.py").exists()
    assert "refusing to overwrite" in capsys.readouterr().err


def test_validation_failure_writes_nothing(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A catalog with an error prints the diagnostic, exits 1 and leaves the tree as it was."""
    (tree / "catalog" / "broken.yaml").write_text(
        "owner: fixture.broken\nmodule: broken\ndescription: Broken.\n"
        "teed:\n  - logger_key: x\n    name: not_rl\n    kind: gauge\n    unit: s\n"
        "    description: Broken row.\n"
    )
    assert run("generate", "--root", str(tree)) == 1
    assert generated_files(tree) == {}
    err = capsys.readouterr().err
    assert "catalog/broken.yaml:6" in err
    assert "nothing written" in err


def test_a_missing_catalog_folder_is_an_error_not_a_mass_deletion(
    tree: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Pointing --root at a tree without catalog files removes nothing."""
    assert run("generate", "--root", str(tree)) == 0
    for path in (tree / "catalog").glob("*.yaml"):
        path.unlink()
    before = generated_files(tree)
    assert run("generate", "--root", str(tree)) == 2
    assert generated_files(tree) == before
    assert "no catalog files" in capsys.readouterr().err


def test_output_is_identical_whatever_the_input_order(tree: Path) -> None:
    """Loading the files in reverse order renders the same plan, byte for byte."""
    paths = sorted((tree / "catalog").glob("*.yaml"))
    forward = load_and_check(paths, root=tree)
    backward = load_and_check(list(reversed(paths)), root=tree)
    assert forward.ok
    assert backward.ok
    assert render_all(forward.catalog) == render_all(backward.catalog)


def test_every_planned_file_carries_the_generated_marker(tree: Path) -> None:
    """Python, Markdown and JSON outputs are all recognisable as generated (so removable)."""
    result = load_and_check(root=tree)
    plan = render_all(result.catalog)
    assert plan
    assert all(is_generated(text) for text in plan.values())
    for path in plan:
        # The schema copy is the one file outside them (beside the catalog, owned alone).
        in_managed = any(path.startswith(f"{directory}/") for directory in MANAGED_DIRS)
        assert in_managed or path == "catalog/catalog.schema.json", path


def test_a_renderer_path_outside_the_managed_folders_is_rejected(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The plan refuses output it could never clean up."""
    from codegen.generate import plan as generate

    def rogue(catalog: Catalog, config: object) -> dict[str, str]:
        del catalog, config
        return {"README.md": "<!-- Code generated by test. DO NOT EDIT. -->\n"}

    monkeypatch.setattr(generate, "RENDERERS", (("rogue", rogue),))
    with pytest.raises(PlanError, match="outside the generated folders"):
        render_all(Catalog(()))


def test_built_in_json_outputs_are_accepted_without_parsing_them_again(
    tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The dashboards and catalog.json (json.dumps output) skip the full JSON parse of the check."""
    from codegen.generate import plan as generate
    from codegen.generate import writer

    result = load_and_check(root=tree)
    parsed: list[int] = []
    real_loads = writer.json.loads

    def counting_loads(text: str) -> object:
        parsed.append(len(text))
        return real_loads(text)

    monkeypatch.setattr(writer.json, "loads", counting_loads)
    plan = render_all(result.catalog)
    assert any(path.endswith(".json") for path in plan)
    assert parsed == []
    assert generate._marked(
        "render_dashboards", plan[sorted(p for p in plan if p.endswith(".json"))[0]]
    )


@pytest.mark.parametrize(
    ("renderer_name", "text", "accepted"),
    [
        ("render_dashboards", '{\n  "__generated__": "x",\n  "panels": []\n}\n', True),
        ("render_docs_pages", '{"__generated__":"x","rows":[]}\n', True),
        ("render_dashboards", '{"panels": [], "__generated__": "x"}', True),  # parsed: still found
        ("render_dashboards", '{"panels": [{"__generated__": true}]}', False),
        ("render_dashboards", '{"title": "no marker"}', False),
        ("render_template_outputs", '{"__generated__": "x", broken', False),  # parsed: invalid
        ("render_template_outputs", '{"__generated__": "x"}', True),
    ],
)
def test_json_outputs_need_a_top_level_marker_whichever_renderer(
    monkeypatch: pytest.MonkeyPatch, renderer_name: str, text: str, accepted: bool
) -> None:
    """A JSON output without a top-level marker is refused; only other renderers' text is parsed."""
    from codegen.generate import plan as generate

    def renderer(catalog: Catalog, config: object) -> dict[str, str]:
        del catalog, config
        return {"docs/dashboards/x.json": text}

    monkeypatch.setattr(generate, "RENDERERS", ((renderer_name, renderer),))
    if accepted:
        assert render_all(Catalog(())) == {"docs/dashboards/x.json": text}
    else:
        with pytest.raises(PlanError, match="without the generated marker"):
            render_all(Catalog(()))


# --- check ----------------------------------------------------------------------------------


def test_check_passes_on_a_freshly_generated_tree(
    tree: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """check exits 0 and says the files are current."""
    assert run("generate", "--root", str(tree)) == 0
    capsys.readouterr()
    assert run("check", "--root", str(tree)) == 0
    assert "are current" in capsys.readouterr().out


def _stale(tree: Path) -> str:
    catalog = tree / "catalog" / "alpha.yaml"
    catalog.write_text(catalog.read_text().replace("Tokens seen", "Tokens counted"))
    return f"{GENERATED}/alpha.py"


def _hand_edit(tree: Path) -> str:
    module = tree / GENERATED / "alpha.py"
    module.write_text(module.read_text().replace("Tokens seen", "Tokens edited"))
    return f"{GENERATED}/alpha.py"


def _missing(tree: Path) -> str:
    (tree / GENERATED / "beta.py").unlink()
    return f"{GENERATED}/beta.py"


def _left_over(tree: Path) -> str:
    (tree / "catalog" / "beta.yaml").unlink()
    return f"{GENERATED}/beta.py"


@pytest.mark.parametrize(
    ("damage", "reason"),
    [
        (_stale, "stale or hand-edited"),
        (_hand_edit, "stale or hand-edited"),
        (_missing, "missing"),
        (_left_over, "should be removed"),
    ],
)
def test_check_fails_with_a_diff_and_the_fix_command(
    tree: Path, capsys: pytest.CaptureFixture[str], damage: object, reason: str
) -> None:
    """Stale, hand-edited, missing and left-over files each fail check, which writes nothing."""
    assert run("generate", "--root", str(tree)) == 0
    path = damage(tree)  # type: ignore[operator]
    before = generated_files(tree)
    capsys.readouterr()
    assert run("check", "--root", str(tree), "--max-diff-lines", "100000") == 1
    out = capsys.readouterr().out
    assert f"{path}: {reason}" in out
    assert f"a/{path}" in out or f"b/{path}" in out
    assert "run `metric-catalog generate`" in out  # no [tool.metric-catalog]: the default
    assert generated_files(tree) == before


def test_check_caps_the_diff(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A large difference prints at most --max-diff-lines lines and says how many were hidden."""
    (tree / "catalog" / "beta.yaml").unlink()  # nothing on disk yet: everything is missing
    capsys.readouterr()
    assert run("check", "--root", str(tree), "--max-diff-lines", "10") == 1
    out = capsys.readouterr().out
    assert "more diff lines not shown" in out
    diff_lines = [line for line in out.splitlines() if line[:1] in {"+", "-", "@", " "}]
    assert len(diff_lines) == 10


def test_a_relative_root_gives_the_same_headers(tree: Path) -> None:
    """--root spelled relative to the cwd still names sources catalog/<file>.yaml."""
    assert run("generate", "--root", os.path.relpath(tree)) == 0
    first_line = (tree / GENERATED / "alpha.py").read_text().split("\n", 1)[0]
    expected = "# Code generated by metric-catalog generate from catalog/alpha.yaml. DO NOT EDIT."
    assert first_line == expected


@pytest.mark.parametrize("fails", [False, True], ids=["renders", "renderer_raises"])
def test_rendering_runs_without_automatic_collection_and_restores_it_after(
    tree: Path, monkeypatch: pytest.MonkeyPatch, fails: bool
) -> None:
    """The loaded catalog is not walked by collections mid-render; the caller's setting is back."""
    import gc

    from codegen.generate import plan as generate

    seen: list[bool] = []

    def probe(catalog: Catalog, config: object) -> dict[str, str]:
        del catalog, config
        seen.append(gc.isenabled())
        if fails:
            raise PlanError("probe refused the catalog")
        return {}

    monkeypatch.setattr(generate, "RENDERERS", (("probe", probe),))
    assert gc.isenabled()
    if fails:
        with pytest.raises(PlanError, match="probe refused"):
            generate.load_plan(tree)
    else:
        plan, diagnostics = generate.load_plan(tree)
        assert plan == {}
        assert not [d for d in diagnostics if d.severity.value == "error"]
    assert seen == [False]
    assert gc.isenabled()
