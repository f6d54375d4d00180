"""Hostile ``outputs`` entries, template links, and catalog file names on the docs site.

Past issue 18's list: an ``outputs`` entry or a template reaching a file
outside the project (``../../etc/passwd``, an absolute path, a symbolic link in
the template folder, an ``include`` climbing out) is refused and nothing of
that file reaches an output; a catalog file whose legal name holds spaces,
``&``, quotes or a backtick still gets its docs page (the directive argument
was HTML-escaped, split at spaces, or not a fence at all).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from codegen.cli import main

ROW = """\
owner: myrl.m{n}
module: m{n}
description: Metrics of loop {n}.
prefix: train
teed:
  - logger_key: k{n}
    name: rl.v{n}.loss
    kind: gauge
    unit: "1"
    description: Value-function loss of loop {n} over the batch.
"""

TABLE = """\
[tool.metric-catalog]
catalog = ["catalog/*.yaml"]
package = "gen"
package-dir = "gen"
templates-dir = "templates"
"""

SECRET = "s3cr3t-do-not-render"


def project(root: Path, table: str = TABLE, names: tuple[str, ...] = ("ppo.yaml",)) -> Path:
    root.mkdir(exist_ok=True)
    (root / "pyproject.toml").write_text(table, encoding="utf-8")
    (root / "catalog").mkdir()
    for n, name in enumerate(names, start=1):
        (root / "catalog" / name).write_text(ROW.format(n=n), encoding="utf-8")
    (root / "templates").mkdir()
    return root


def outputs(template: str, path: str = "web/{module}.txt") -> str:
    entry = f"template = {json.dumps(template)}\npath = {json.dumps(path)}\n"
    return f"\n[[tool.metric-catalog.outputs]]\n{entry}"


def written(root: Path) -> list[str]:
    return sorted(p.name for p in root.iterdir())


@pytest.mark.parametrize(
    ("template", "path", "problem"),
    [
        ("../../etc/passwd", "web/{module}.txt", "leaves the project root"),
        ("/etc/passwd", "web/{module}.txt", "is absolute"),
        ("t.j2", "/tmp/evil/{module}.txt", "is absolute"),
        ("t.j2", "../outside/{module}.txt", "leaves the project root"),
        ("t.j2", "web/../../{module}.txt", "leaves the project root"),
        ("t.j2", "C:/x/{module}.txt", "is absolute"),
        ("t.j2", "web/{module}\r.txt", "control character '\\r'"),
        ("t\x1b[2J.j2", "web/{module}.txt", "control character '\\x1b'"),
    ],
)
def test_an_outputs_entry_reaching_outside_the_project_is_refused_at_its_table(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], template: str, path: str, problem: str
) -> None:
    root = project(tmp_path, TABLE + outputs(template, path))
    assert main(["generate", "--root", str(root)]) == 2
    err = capsys.readouterr().err
    assert "pyproject.toml:7: [tool.metric-catalog] outputs:" in err
    assert problem in err
    assert written(root) == ["catalog", "pyproject.toml", "templates"]


def test_a_template_linking_outside_the_project_is_refused_and_not_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    secret = tmp_path / "home" / "id_rsa"
    secret.parent.mkdir()
    secret.write_text(f"// {{{{ header }}}}\n{SECRET}\n", encoding="utf-8")
    root = project(tmp_path / "proj", TABLE + outputs("t.j2"))
    (root / "templates" / "t.j2").symlink_to(secret)
    assert main(["generate", "--root", str(root)]) == 2
    err = capsys.readouterr().err
    assert "template 't.j2' (" in err
    assert "is a link to" in err
    assert "outside the project" in err
    assert SECRET not in err
    assert written(root) == ["catalog", "pyproject.toml", "templates"]


def test_a_linked_override_of_a_built_in_template_is_refused_too(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text(SECRET, encoding="utf-8")
    root = project(tmp_path / "proj")
    (root / "templates" / "docs").mkdir()
    (root / "templates" / "docs" / "owner.md.j2").symlink_to(secret)
    assert main(["generate", "--root", str(root)]) == 2
    assert "outside the project" in capsys.readouterr().err
    assert written(root) == ["catalog", "pyproject.toml", "templates"]


def test_a_template_linking_inside_the_project_still_works(tmp_path: Path) -> None:
    root = project(tmp_path, TABLE + outputs("t.j2"))
    (root / "shared").mkdir()
    (root / "shared" / "t.j2").write_text("// {{ header }}\n{{ module }}\n", encoding="utf-8")
    (root / "templates" / "t.j2").symlink_to(root / "shared" / "t.j2")
    assert main(["generate", "--root", str(root)]) == 0
    assert (root / "web" / "m1.txt").read_text(encoding="utf-8").endswith("\nm1\n")


@pytest.mark.parametrize("target", ["../../../../etc/passwd", "/etc/passwd", "../pyproject.toml"])
def test_an_include_climbing_out_of_the_template_folder_is_not_found(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], target: str
) -> None:
    root = project(tmp_path, TABLE + outputs("t.j2"))
    (root / "templates" / "t.j2").write_text(
        f'// {{{{ header }}}}\n{{% include "{target}" %}}\n', encoding="utf-8"
    )
    assert main(["generate", "--root", str(root)]) == 1
    err = capsys.readouterr().err
    assert f"error[TEMPLATE]: template '{target}' (used by 't.j2') is not in the template" in err
    assert written(root) == ["catalog", "pyproject.toml", "templates"]


NAMES = (
    "sp ace.yaml",
    "a&b.yaml",
    "it's.yaml",
    'q"uote.yaml',
    "back`tick.yaml",
    "é名.yaml",
    "--> <script>alert(1) <!-- .yaml",
)


def test_each_weird_but_legal_file_name_gets_a_directive_its_own_path(tmp_path: Path) -> None:
    root = project(tmp_path, TABLE.replace('templates-dir = "templates"\n', ""), NAMES)
    assert main(["generate", "--root", str(root)]) == 0
    for n, name in enumerate(NAMES, start=1):
        page = (root / "docs" / "metrics" / f"m{n}.md").read_text(encoding="utf-8")
        fence = "~~~" if "`" in name else "```"
        assert page.endswith(f"{fence}{{metric-catalog-owner}} catalog/{name}\n{fence}\n")


def test_the_docs_site_builds_every_owner_page_of_weird_but_legal_file_names(
    tmp_path: Path,
) -> None:
    pytest.importorskip("myst_parser")
    root = project(tmp_path, TABLE.replace('templates-dir = "templates"\n', ""), NAMES)
    assert main(["generate", "--root", str(root)]) == 0
    docs = root / "docs"
    (docs / "conf.py").write_text(
        'extensions = ["myst_parser", "metric_catalog.sphinx"]\nhtml_theme = "basic"\n'
        'source_suffix = {".md": "markdown", ".rst": "restructuredtext"}\n'
        'exclude_patterns = ["_build", "dashboards/*.json"]\n',
        encoding="utf-8",
    )
    (docs / "index.rst").write_text(
        "Catalog\n=======\n\n.. toctree::\n\n   metrics/index\n", encoding="utf-8"
    )
    done = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "-q", "-b", "html", "docs", "docs/_build"],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    for n in range(1, len(NAMES) + 1):
        html = (docs / "_build" / "metrics" / f"m{n}.html").read_text(encoding="utf-8")
        assert f'id="rl-v{n}-loss"' in html  # the entry of its one series
        assert "<script>alert" not in html
