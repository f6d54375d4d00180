"""``self.collector.collect(...)`` goes to the ``collect`` of every scanned class the
class's methods assign to ``self.collector`` (imported through a package's re-exports
too); a dict unpacked into ``self.<attr>`` from a returned tuple is what that attribute
holds, or unresolved where it is unpacked (never dropped)."""

from __future__ import annotations

from pathlib import Path

import pytest

from codegen.catalog.model import Catalog
from codegen.scan.scanner import ScanReport, scan

_BASE = """\
class Collector:
    def __init__(self, actors):
        self.actors = actors

    def stats(self, elapsed, data):
        return {"zz_actor/total_time": elapsed, "zz_actor/count": len(data)}

    def collect(self, prompts):
        data = [actor(prompts) for actor in self.actors]
        return data, self.stats(1.0, data)
"""

_ASYNC = """\
from .base import Collector


class AsyncCollector(Collector):
    def collect(self, prompts):
        data = []
        metrics = self.stats(2.0, data)
        metrics["zz_actor/queued"] = len(prompts)
        return data, metrics
"""

_LEARNER = """\
import wandb

from collectors import AsyncCollector, Collector


class Learner:
    def __init__(self, args, actors, given):
        INIT

    def run(self, loader):
        self.actor_info = {}
        for prompts in loader:
            data, self.actor_info = self.collector.collect(prompts)
            self.log(data)

    def log(self, data):
        wandb.log({**self.actor_info, "zz_misc/len": len(data)})
"""


def _scan(tmp_path: Path, catalog: Catalog, init: str) -> ScanReport:
    root = tmp_path / "src"
    files = {
        "collectors/__init__.py": "from .base import Collector\nfrom .aio import AsyncCollector\n",
        "collectors/base.py": _BASE,
        "collectors/aio.py": _ASYNC,
        "learner.py": _LEARNER.replace("INIT", init),
    }
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return scan([root], catalog, cwd=tmp_path, unlogged=False)


def _found(report: ScanReport, code: str) -> set[tuple[str, str]]:
    return {
        (
            d.message.split("'")[1] if "key '" in d.message else "-",
            f"{d.position.path}:{d.position.line}",
        )
        for d in report.diagnostics
        if d.code == code and d.position is not None
    }


_BOTH = """\
if args.asynchronous:
            self.collector = AsyncCollector(actors)
        else:
            self.collector = Collector(actors)
        self.collector = None"""


def test_a_method_of_a_member_returns_what_every_class_assigned_to_it_returns(
    tmp_path: Path, repo_catalog: Catalog
) -> None:
    report = _scan(tmp_path, repo_catalog, _BOTH)

    assert _found(report, "SCAN_UNDECLARED") == {
        ("zz_actor/total_time", "src/collectors/base.py:6"),
        ("zz_actor/count", "src/collectors/base.py:6"),
        ("zz_actor/queued", "src/collectors/aio.py:8"),
        ("zz_misc/len", "src/learner.py:21"),
    }
    assert _found(report, "SCAN_UNRESOLVED") == set()


@pytest.mark.parametrize(
    "init",
    [
        "self.collector = given",  # a parameter: any object may be there
        "self.collector = make_collector(actors)",  # an unknown call's result
    ],
)
def test_a_member_of_no_scanned_class_is_unresolved_where_it_is_unpacked(
    tmp_path: Path, repo_catalog: Catalog, init: str
) -> None:
    report = _scan(tmp_path, repo_catalog, init)

    assert _found(report, "SCAN_UNDECLARED") == {("zz_misc/len", "src/learner.py:17")}
    assert _found(report, "SCAN_UNRESOLVED") == {("-", "src/learner.py:13")}
