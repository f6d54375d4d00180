"""metric-catalog as another codebase adopts it: a real wheel in a fresh venv, then its workflow.

Builds this repository's sdist and wheel (``python -m build``), installs the
wheel with the ``codegen``, ``otel`` and ``docs`` extras into a new virtual
environment, and runs what an adopter runs: in a project that already has a
``pyproject.toml``, ``metric-catalog init`` (from a subfolder), then
:data:`ADOPTION_FLOW` (``generate``, ``check``, ``scan``, ``validate``,
``lint``), a run of its own code and ``live-check`` of that run, ``infer`` on a
later run with new keys, ``validate`` and ``live-check`` again; ``init`` in an
empty project; and in a copy of ``examples/adopter`` (package ``myrl``, catalog
in ``myrl/telemetry/catalog/``) ``generate``, a non-editable install of the
project, imports and ``mypy --strict`` of its generated modules, ``check``
(passing, then failing after a YAML edit) and a Sphinx build with the shipped
``metric_catalog.sphinx`` extension under ``-W``.

Skipped locally when ``build`` or ``hatchling`` is missing; fails under ``CI``
(the dev extra installs both).
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tarfile
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "adopter"
TIMEOUT = 300


def _require(module: str) -> None:
    if importlib.util.find_spec(module) is None:
        if os.environ.get("CI"):
            pytest.fail(f"{module} is not installed, but CI must have it (the dev extra)")
        pytest.skip(f"{module} is not installed (pip install -e '.[dev]')")


def _env(venv: Path | None = None) -> dict[str, str]:
    """The environment without this repo's venv or source tree on any path."""
    env = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "VIRTUAL_ENV"}}
    if venv is not None:
        env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
        env["VIRTUAL_ENV"] = str(venv)
    return env


def run(
    command: Sequence[str | Path], cwd: Path, venv: Path | None = None, *, expect: int = 0
) -> subprocess.CompletedProcess[str]:
    """Run ``command``; fail the test with its output unless it exits ``expect``."""
    proc = subprocess.run(
        [str(part) for part in command],
        cwd=cwd,
        env=_env(venv),
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )
    if proc.returncode != expect:
        pytest.fail(
            f"{' '.join(map(str, command))} exited {proc.returncode}, expected {expect}\n"
            f"--- stdout\n{proc.stdout}\n--- stderr\n{proc.stderr}"
        )
    return proc


ADOPTION_FLOW: tuple[tuple[str, ...], ...] = (
    ("generate",),
    ("check",),
    ("scan", "--warnings-as-errors"),
    ("validate",),
    ("lint", "--warnings-as-errors"),
)
"""The adopter's commands after ``init``, in order, each of which must pass.

``infer`` follows once the project has logged a run (see the test below).
"""

TRAIN_PY = '''"""A training loop of the project: logs through the tee into a JSONL run log."""

import sys

from metric_catalog.loggers import JsonlLogger, TeeLogger

from other_rl.telemetry.generated import example


def main(path: str) -> None:
    with JsonlLogger(path) as backend:
        logger = TeeLogger(backend)
        for step in range(3):
            logger.log_metrics({"loss": 1.0 / (step + 1)}, step, prefix="train")
            backend.record_metrics({example.EXAMPLE_STEP_DURATION.key: 0.5}, step=step)


if __name__ == "__main__":
    main(sys.argv[1])
'''
"""The project's own code, which ``scan`` reads and whose run ``live-check`` judges."""


@dataclass(frozen=True)
class Dist:
    """The built distributions."""

    wheel: Path
    sdist: Path


@dataclass(frozen=True)
class Env:
    """A fresh venv holding the wheel (codegen and docs extras), mypy and hatchling."""

    root: Path

    def bin(self, name: str) -> Path:
        """An executable of the venv."""
        return self.root / "bin" / name


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Dist:
    """The sdist, and the wheel built from it, as ``python -m build`` makes them."""
    _require("build")
    _require("hatchling")
    out = tmp_path_factory.mktemp("dist")
    # --no-isolation: hatchling from the dev extra, no download of a build env.
    run([sys.executable, "-m", "build", "--no-isolation", "--outdir", out, REPO], cwd=out)
    (wheel,) = out.glob("metric_catalog-*.whl")
    (sdist,) = out.glob("metric_catalog-*.tar.gz")
    return Dist(wheel, sdist)


@pytest.fixture(scope="module")
def venv(dist: Dist, tmp_path_factory: pytest.TempPathFactory) -> Env:
    """A new virtual environment with ``metric-catalog[codegen,otel,docs]`` from the wheel.

    The extras the guide's install line names: exporting needs ``otel``.
    """
    root = tmp_path_factory.mktemp("venv") / "venv"
    run([sys.executable, "-m", "venv", root], cwd=root.parent)
    pip = [root / "bin" / "python", "-m", "pip", "install", "--quiet"]
    run([*pip, f"{dist.wheel}[codegen,otel,docs]", "mypy", "hatchling", "pytest"], cwd=root.parent)
    return Env(root)


@pytest.fixture(scope="module")
def project(venv: Env, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of examples/adopter after ``metric-catalog generate`` and a non-editable install."""
    root = tmp_path_factory.mktemp("adopter") / "myrl-project"
    shutil.copytree(EXAMPLE, root, ignore=shutil.ignore_patterns(".cache", "_build", "web"))
    out = run([venv.bin("metric-catalog"), "generate"], cwd=root, venv=venv.root).stdout
    assert "generate: 9 written" in out  # the rules (ppo.rules.yaml) and wandb_metrics.py too
    pip = [venv.bin("python"), "-m", "pip", "install", "--quiet", "--no-build-isolation"]
    run([*pip, "--no-deps", root], cwd=root.parent, venv=venv.root)
    return root


def _names(archive: Path) -> set[str]:
    if archive.suffix == ".whl":
        with zipfile.ZipFile(archive) as wheel:
            return set(wheel.namelist())
    with tarfile.open(archive) as sdist:
        return {name.split("/", 1)[1] for name in sdist.getnames() if "/" in name}


def test_the_wheel_ships_the_generator_schema_templates_and_extension_not_codegen(
    dist: Dist,
) -> None:
    names = _names(dist.wheel)
    for expected in (
        "metric_catalog/vocabulary.py",
        "metric_catalog/codegen/__init__.py",
        "metric_catalog/codegen/__main__.py",
        "metric_catalog/codegen/cli.py",
        "metric_catalog/codegen/config.py",
        "metric_catalog/codegen/commands/init.py",
        "metric_catalog/codegen/schema/catalog.schema.json",
        "metric_catalog/codegen/generate/templates/python/module.py.j2",
        "metric_catalog/codegen/generate/templates/docs/owner.md.j2",
        "metric_catalog/sphinx/__init__.py",
    ):
        assert expected in names, expected
    assert any(n.startswith("metric_catalog/sphinx/static/") for n in names)
    assert not [n for n in names if n.startswith("codegen/")], "top-level codegen shipped"
    assert not [n for n in names if "__pycache__" in n or n.endswith(".pyc")]
    # The license the metadata declares ships as a file (Apache-2.0 asks for its text).
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names), "no LICENSE"
    # The editable-install shim is not shipped: the real package replaces it.
    with zipfile.ZipFile(dist.wheel) as wheel:
        init = wheel.read("metric_catalog/codegen/__init__.py").decode()
        entry_points = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
        assert (
            "metric-catalog = metric_catalog.codegen.cli:main" in wheel.read(entry_points).decode()
        )
    assert "__path__" not in init
    assert (REPO / "codegen" / "__init__.py").read_text() == init
    sdist = _names(dist.sdist)
    assert {"codegen/cli.py", "src/metric_catalog/vocabulary.py", "pyproject.toml"} <= sdist
    assert "LICENSE" in sdist


def test_init_starts_an_empty_project_that_generates_and_checks(venv: Env, tmp_path: Path) -> None:
    root = tmp_path / "newrl"
    root.mkdir()
    command = venv.bin("metric-catalog")
    out = run([command, "init"], cwd=root, venv=venv.root).stdout
    assert "wrote pyproject.toml" in out
    assert "metric-catalog generate" in out
    assert "metric-catalog check" in out
    example = root / "newrl" / "telemetry" / "catalog" / "example.yaml"
    first = example.read_text().splitlines()[0]
    # The project's own copy of the schema, beside the catalog: never the venv's.
    assert first == "# yaml-language-server: $schema=catalog.schema.json"
    assert (example.parent / "catalog.schema.json").is_file()
    before = {p: p.read_bytes() for p in root.rglob("*") if p.is_file()}
    again = run([command, "init"], cwd=root, venv=venv.root).stdout
    assert "already has [tool.metric-catalog]" in again
    assert {p: p.read_bytes() for p in root.rglob("*") if p.is_file()} == before
    run([command, "generate"], cwd=root, venv=venv.root)
    assert (root / "newrl" / "telemetry" / "generated" / "example.py").is_file()
    run([command, "check"], cwd=root, venv=venv.root)
    run([command, "lint", "--warnings-as-errors"], cwd=root, venv=venv.root)


def test_init_generate_check_in_a_project_with_a_pyproject(venv: Env, tmp_path: Path) -> None:
    """The most common first run: an existing project with a [project] table, no table of ours."""
    original = (
        b'[build-system]\r\nrequires = ["hatchling"]  # kept as it is\r\n'
        b'build-backend = "hatchling.build"\r\n\r\n'
        b'[project]\r\nname = "other-rl"\r\nversion = "0.1.0"'
    )
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_bytes(original)
    (tmp_path / "other_rl").mkdir()
    (tmp_path / "other_rl" / "__init__.py").write_text("")
    (tmp_path / "other_rl" / "train.py").write_text(TRAIN_PY)
    sub = tmp_path / "other_rl"
    command = venv.bin("metric-catalog")
    # From a subfolder: the nearest pyproject.toml is the project.
    out = run([command, "init"], cwd=sub, venv=venv.root).stdout
    assert "added [tool.metric-catalog] to ../pyproject.toml" in out
    assert pyproject.read_bytes().startswith(original)
    assert not (sub / "pyproject.toml").exists()
    for step in ADOPTION_FLOW:
        run([command, *step], cwd=tmp_path, venv=venv.root)
    # A run of the project's own code: its generated module, the tee and the JSONL log.
    run([venv.bin("python"), "-m", "other_rl.train", "run.jsonl"], cwd=tmp_path, venv=venv.root)
    out = run(
        [command, "live-check", "run.jsonl", "--fail-on", "all"], cwd=tmp_path, venv=venv.root
    )
    assert "rl.example.loss" in out.stdout
    # The code logs more than the catalog declares: infer drafts it, and then
    # validate passes and live-check finds nothing undeclared.
    more = (
        "import sys\n"
        "from metric_catalog.loggers import JsonlLogger\n"
        "with JsonlLogger(sys.argv[1]) as backend:\n"
        "    for step in range(1, 6):\n"
        "        backend.log_metrics({'grad_norm': 0.5, 'num_samples': 64}, step, prefix='train')\n"
        "        backend.log_metrics({f'timing_s/{s}': 1.0 for s in ('gen', 'ref')}, step)\n"
    )
    run([venv.bin("python"), "-c", more, "run2.jsonl"], cwd=tmp_path, venv=venv.root)
    catalog = tmp_path / "other_rl" / "telemetry" / "catalog"
    run([command, "infer", "run2.jsonl", "--out-dir", catalog], cwd=tmp_path, venv=venv.root)
    run([command, "validate"], cwd=tmp_path, venv=venv.root)
    run(
        [command, "live-check", "run2.jsonl", "--fail-on", "undeclared"],
        cwd=tmp_path,
        venv=venv.root,
    )


def test_the_installed_project_imports_its_generated_modules(venv: Env, project: Path) -> None:
    code = (
        "import myrl.ppo, myrl.telemetry.generated.ppo as m\n"
        "print(m.__file__)\n"
        "print(m.VALUE_LOSS.name, m.VALUE_LOSS_KEY)\n"
        "print(myrl.ppo.step_metrics(1.0, 0.5, 2.0))\n"
    )
    # From another folder: the installed copy, not the project's source tree.
    out = run([venv.bin("python"), "-c", code], cwd=project.parent, venv=venv.root).stdout
    path, names, metrics = out.splitlines()
    assert "site-packages" in path
    assert names == "rl.value.loss value_loss"
    assert metrics == "{'value_loss': 1.0, 'clip_fraction': 0.5, 'reward': 2.0}"


def test_the_projects_telemetry_tests_use_the_registered_pytest_plugin(
    venv: Env, project: Path
) -> None:
    # No -p: the installed package registers metric_catalog.testing (pytest11 entry point).
    done = run([venv.bin("python"), "-m", "pytest", "-q", "tests"], cwd=project, venv=venv.root)
    assert "2 passed" in done.stdout


def test_generated_modules_pass_mypy_strict(venv: Env, project: Path) -> None:
    out = run([venv.bin("mypy"), "--strict", "myrl"], cwd=project, venv=venv.root).stdout
    assert "Success" in out


def test_check_passes_then_fails_when_a_yaml_row_changes(venv: Env, project: Path) -> None:
    command = venv.bin("metric-catalog")
    assert "are current" in run([command, "check"], cwd=project, venv=venv.root).stdout
    catalog = project / "myrl" / "telemetry" / "catalog" / "ppo.yaml"
    original = catalog.read_text()
    try:
        catalog.write_text(original.replace("Value-function loss", "Critic loss"))
        out = run([command, "check"], cwd=project, venv=venv.root, expect=1).stdout
        assert "myrl/telemetry/generated/ppo.py: stale or hand-edited" in out
        assert "web/src/metrics/ppo.ts: stale or hand-edited" in out
        assert "run `metric-catalog generate`" in out
    finally:
        catalog.write_text(original)
    run([command, "check"], cwd=project, venv=venv.root)


def test_the_docs_build_with_the_shipped_extension_under_w(venv: Env, project: Path) -> None:
    out = project / "docs" / "_build" / "html"
    run(
        [venv.bin("sphinx-build"), "-W", "-q", "-b", "html", "docs", out],
        cwd=project,
        venv=venv.root,
    )
    # Identifiers carry <wbr> break points after "." and "_"; the text is the same.
    page = (out / "metrics" / "ppo.html").read_text(encoding="utf-8").replace("<wbr>", "")
    assert "myrl.telemetry.generated.ppo.VALUE_LOSS" in page
    assert "metric_catalog.generated" not in page
    assert (out / "catalog-source" / "ppo.yaml.html").is_file()
    assert (out / "dashboards" / "ppo.json").is_file()
    # title = "myrl metrics" in [tool.metric-catalog] titles the site and heads the index;
    # the adopter's conf.py does not repeat it.
    conf = (project / "docs" / "conf.py").read_text(encoding="utf-8")
    assert not re.search(r"^html_title\s*=", conf, re.MULTILINE)
    assert re.search(r"<title>ppo (-|&#8212;) myrl metrics</title>", page)
    index = (out / "metrics" / "index.html").read_text(encoding="utf-8")
    assert re.search(r"<h1>myrl metrics<a class=\"headerlink\"", index)


def test_bundled_rows_clash_only_when_both_modules_are_imported(venv: Env, project: Path) -> None:
    """myrl's ppo row tees train/reward, as this repo's common module does."""
    python = venv.bin("python")
    alone = "import myrl.telemetry.generated.ppo; print('ok')"
    assert run([python, "-c", alone], cwd=project.parent, venv=venv.root).stdout == "ok\n"
    both = "import metric_catalog.generated.common, myrl.telemetry.generated.ppo"
    err = run([python, "-c", both], cwd=project.parent, venv=venv.root, expect=1).stderr
    assert "myrl.telemetry.generated.ppo" in err
    assert "metric_catalog.generated.common" in err
