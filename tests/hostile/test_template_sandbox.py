"""A project's templates render in Jinja's sandbox: no template runs code or changes a value.

Issue 18 item 2: with ``templates-dir`` set, ``{{ cycler.__init__.__globals__.os
.system('...') }}`` ran the command at ``generate``. Every template (an added
output, or an override of a built-in module or docs page) now renders in
``ImmutableSandboxedEnvironment``: each escape below fails ``generate`` with
exit 2, the template's file and line and the fix, before anything is written
or run.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from codegen.cli import main
from tests.adopter_project import ROW as ADOPTER_ROW

ROW = ADOPTER_ROW

TABLE = """\
[tool.metric-catalog]
catalog = ["catalog/*.yaml"]
package = "gen"
package-dir = "gen"
templates-dir = "templates"
"""

OUTPUT = """
[[tool.metric-catalog.outputs]]
template = "out.txt.j2"
path = "web/{module}.txt"
"""

PWNED = "touch PWNED"

ESCAPES = {
    "cycler-globals": f"{{{{ cycler.__init__.__globals__.os.system('{PWNED}') }}}}",
    "self-globals": f"{{{{ self.__init__.__globals__.os.system('{PWNED}') }}}}",
    "lipsum-globals": (f"{{{{ lipsum.__globals__['os'].popen('{PWNED}; id -u').read() }}}}"),
    "joiner-globals": f"{{{{ joiner.__init__.__globals__.os.system('{PWNED}') }}}}",
    "namespace-globals": f"{{{{ namespace.__init__.__globals__.os.system('{PWNED}') }}}}",
    "str-mro": ("{{ ''.__class__.__mro__[1].__subclasses__() }}"),
    "undefined-class": "{{ config.__class__.__init__.__globals__ }}",
    "row-class": "{{ file.__class__.__module__ }}",
    "attr-filter": "{{ cycler | attr('__init__') | attr('__globals__') }}",
    "format-method": "{{ '{0.__class__.__mro__}'.format(file) }}",
    "format-map": "{{ '{x.__class__}'.format_map({'x': file}) }}",
    "list-append": "{% set rows = [1] %}{% set x = rows.append(2) %}{{ rows }}",
    "dict-update": "{% set d = {} %}{% set x = d.update(a=1) %}{{ d }}",
    "func-globals": "{{ py_kwarg.__globals__ }}",
    "filter-globals": "{{ (file.rows | first).__class__ }}",
}


def project(root: Path, templates: dict[str, str], table: str = TABLE) -> Path:
    (root / "pyproject.toml").write_text(table, encoding="utf-8")
    (root / "catalog").mkdir()
    (root / "catalog" / "ppo.yaml").write_text(ROW, encoding="utf-8")
    for name, text in templates.items():
        path = root / "templates" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def nothing_written(root: Path) -> bool:
    return sorted(p.name for p in root.iterdir()) == ["catalog", "pyproject.toml", "templates"]


@pytest.mark.parametrize("expression", ESCAPES.values(), ids=ESCAPES.keys())
def test_an_output_template_reaching_outside_the_sandbox_is_refused_with_exit_2(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    expression: str,
) -> None:
    monkeypatch.chdir(tmp_path)  # where an escaped `touch PWNED` would land
    template = "// {{ header }}\n// fine so far\n" + expression + "\n"
    root = project(tmp_path, {"out.txt.j2": template}, TABLE + OUTPUT)
    assert main(["generate", "--root", str(root)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: templates/out.txt.j2:3: ")
    assert "templates are sandboxed" in err
    assert "remove that expression from the template" in err
    assert nothing_written(root)
    assert main(["check", "--root", str(root)]) == 2
    assert not (tmp_path / "PWNED").exists()


@pytest.mark.parametrize(
    "override",
    ["python/module.py.j2", "docs/owner.md.j2", "docs/index.md.j2"],
)
def test_an_override_of_a_built_in_template_is_sandboxed_too(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    override: str,
) -> None:
    monkeypatch.chdir(tmp_path)
    template = "# a comment\n\n" + ESCAPES["cycler-globals"] + "\n"
    root = project(tmp_path, {override: template})
    assert main(["generate", "--root", str(root)]) == 2
    err = capsys.readouterr().err
    assert f"templates/{override}:3: " in err
    assert "access to attribute '__init__'" in err
    assert nothing_written(root)
    assert not (tmp_path / "PWNED").exists()


def test_an_escape_inside_an_included_template_names_that_file_and_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    templates = {
        "out.txt.j2": '// {{ header }}\n{% include "parts/evil.j2" %}\n',
        "parts/evil.j2": "ok\nok\n" + ESCAPES["str-mro"] + "\n",
    }
    root = project(tmp_path, templates, TABLE + OUTPUT)
    assert main(["generate", "--root", str(root)]) == 2
    assert "error: templates/parts/evil.j2:3: " in capsys.readouterr().err
    assert nothing_written(root)


def test_what_templates_are_given_still_works_in_the_sandbox(tmp_path: Path) -> None:
    template = (
        "// {{ header }}\n"
        "{% set ns = namespace(n=0) %}"
        "{% for row in file.rows %}{% set ns.n = ns.n + 1 %}"
        "{{ row.constant_name }} = {{ row.name | json }} {{ row.description | pystr }}\n"
        "{% endfor %}"
        "{{ ns.n }} {{ catalog.rows() | list | length }}"
        " {{ files | map(attribute='module') | join }}"
        " {{ python_module }} {{ title | upper }} {{ range(3) | list }} {{ dict(a=1) }}\n"
    )
    root = project(tmp_path, {"out.txt.j2": template}, TABLE + OUTPUT)
    assert main(["generate", "--root", str(root)]) == 0
    text = (root / "web" / "ppo.txt").read_text(encoding="utf-8")
    assert text.splitlines()[1:] == [
        'VALUE_LOSS = "rl.value.loss" "Value-function loss over the batch."',
        "1 1 ppo gen.ppo METRIC-CATALOG [0, 1, 2] {'a': 1}",
    ]


def test_a_huge_range_is_stopped_by_the_sandbox_not_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    template = "// {{ header }}\n{{ range(10 ** 12) | length }}\n"
    root = project(tmp_path, {"out.txt.j2": template}, TABLE + OUTPUT)
    assert main(["generate", "--root", str(root)]) == 1
    assert "templates/out.txt.j2:2: OverflowError: Range too big" in capsys.readouterr().err
    assert nothing_written(root)


def test_a_failing_override_is_an_error_naming_its_line_not_a_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = project(tmp_path, {"python/module.py.j2": "# {{ header }}\n{{ 1 // 0 }}\n"})
    assert main(["generate", "--root", str(root)]) == 1
    err = capsys.readouterr().err
    assert "error[TEMPLATE]: templates/python/module.py.j2:2: ZeroDivisionError" in err
    assert "fix the template" in err
    assert nothing_written(root)


def _too_large(path: Path) -> None:
    path.write_bytes(b"{# " + b"x" * (4 * 1024 * 1024) + b" #}\n")


def _not_utf8(path: Path) -> None:
    path.write_bytes(b"// {{ header }}\n\xff\xfe\n")


def _outside_link(path: Path) -> None:
    secret = path.parents[2] / "secret.txt"
    secret.write_text("SECRET-CONTENT\n", encoding="utf-8")
    path.unlink()
    path.symlink_to(secret)


@pytest.mark.parametrize(
    ("spoil", "says"),
    [
        pytest.param(_too_large, "at most 4194304 bytes", id="too-large"),
        pytest.param(_not_utf8, "a template is a UTF-8 regular file", id="not-utf8"),
        pytest.param(_outside_link, "outside the project", id="link-out"),
    ],
)
def test_a_template_that_is_not_a_readable_file_inside_the_project_is_refused_unrendered(
    spoil: object,
    says: str,
    *,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Read through safe_fs: bounded, decoded with a message, a link out refused unread."""
    (tmp_path / "p").mkdir()
    root = project(tmp_path / "p", {"out.txt.j2": "// {{ header }}\n"}, TABLE + OUTPUT)
    spoil(root / "templates" / "out.txt.j2")  # type: ignore[operator]
    assert main(["generate", "--root", str(root)]) == 2
    err = capsys.readouterr().err
    assert "templates/out.txt.j2" in err
    assert says in err
    assert "SECRET-CONTENT" not in err
    assert "Traceback" not in err
    assert nothing_written(root)
