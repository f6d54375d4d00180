"""Generated modules register their file's ``bookkeeping:`` keys, so the tee leaves them
out as live-check, scan and infer do (issue 36, finding 4: one meaning everywhere)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from codegen.generate.python import render_python_module
from metric_catalog import vocabulary
from metric_catalog.adapters import tee_flat
from tests.catalog_projects import loaded_catalog
from tests.otel_fixtures import caught_warnings, clean_otel
from tests.routing_cases import AttrSpec, RowSpec, Spec, registered

__all__ = ["clean_otel"]  # fixture used by name

CATALOG = """\
owner: prime_rl.orchestrator
module: orchestrator
description: The orchestrator's file logger.
prefix: ""
bookkeeping:
  - key: time
    reason: Wall-clock timestamp the file logger writes on every line.
  - key: "timing/*/start"
    reason: Start timestamps of the timed phases; the durations are the metrics.
teed: []
"""

SHORT = """\
owner: trainer
module: trainer
description: A trainer with no bookkeeping keys.
teed: []
"""


def test_the_module_registers_its_bookkeeping_keys(tmp_path: Path, clean_otel: None) -> None:
    catalog = loaded_catalog(tmp_path / "project", CATALOG)
    text = render_python_module(catalog.files[0])
    namespace: dict[str, object] = {"__name__": "generated_orchestrator"}
    exec(compile(text, "orchestrator.py", "exec"), namespace)
    assert namespace["BOOKKEEPING"] == ("time", "timing/*/start")
    assert "BOOKKEEPING" in namespace["__all__"]  # type: ignore[operator]
    assert vocabulary.bookkeeping_keys() == ("time", "timing/*/start")
    module = tmp_path / "orchestrator.py"
    module.write_text(text, encoding="utf-8")
    ruff = Path(sys.executable).with_name("ruff")
    for args in (["format", "--check", "--quiet"], ["check", "--quiet", "--select", "F,E"]):
        done = subprocess.run([str(ruff), *args, str(module)], check=False)
        assert done.returncode == 0, args


def test_a_file_without_bookkeeping_keys_generates_none(tmp_path: Path) -> None:
    catalog = loaded_catalog(tmp_path / "project", SHORT)
    text = render_python_module(catalog.files[0])
    assert "BOOKKEEPING" not in text
    assert "register_bookkeeping" not in text


@pytest.mark.parametrize(
    ("logged", "teed"),
    [("time", False), ("timing/gen/start", False), ("timing/gen/seconds", True), ("_step", False)],
)
def test_the_tee_leaves_registered_bookkeeping_keys_out(
    clean_otel: None, logged: str, teed: bool
) -> None:
    """A family under ``""`` would take every one of them; the tee takes only the metric."""
    spec = Spec(
        attributes={"rl.key": AttrSpec(spans=True)}, rows=(RowSpec("rl.any", "", "{rl.key}"),)
    )
    with registered(spec) as reader, caught_warnings():
        vocabulary.register_bookkeeping(("time", "timing/*/start"))
        tee_flat({logged: 1.0})
        data = reader.get_metrics_data()
    assert (data is not None and bool(data.resource_metrics)) is teed


def test_registering_bookkeeping_refuses_what_is_not_a_tuple_of_keys(clean_otel: None) -> None:
    with pytest.raises(ValueError, match="tuple of keys"):
        vocabulary.register_bookkeeping(["time"])  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="tuple of keys"):
        vocabulary.register_bookkeeping(("",))
