"""Calls whose receiver's class is not written at the call: Ray actor handles
(``handle.log_dict.remote(d)``), loggers built from config (``instantiate(cfg.logger)``),
and a package re-exporting the function that builds a logged dict."""

from __future__ import annotations

from pathlib import Path

import pytest

from codegen.catalog.model import Catalog
from codegen.scan.calls import merge_calls, parse_scan_call
from codegen.scan.scanner import scan
from tests.scan.test_sinks import _keys, _scan

_LOGGERS = """\
import wandb


class LoggerBase:
    def log_dict(self, payload, step):
        raise NotImplementedError


class ConsoleLogger(LoggerBase):
    def log_dict(self, payload, step):
        print(payload, step)


class WandbLogger(LoggerBase):
    def log_dict(self, payload, step):
        wandb.log({**payload, "zz_step": step})
"""

_ACTOR = """\
import ray

from pkg.loggers import build_logger


{decorator}
class LogActor:
    def __init__(self, cfg):
        self.logger = build_logger(cfg)

    def log_dict(self, payload, step=None):
        self.logger.log_dict(payload, step=step)
{made}
"""

_WORKER = """\
import ray


class Worker:
    def set_logger(self, handle):
        self.logger = handle

    def step(self, loss):
        out = {}
        out.update({"worker/zz_loss": loss, "worker/zz_time (s)": 1.0})
        ray.get(self.logger.log_dict.remote(out, step=3))
"""


@pytest.mark.parametrize(
    ("decorator", "made"),
    [
        ("@ray.remote", ""),
        ("@ray.remote(num_cpus=1, num_gpus=0)", ""),
        ("", "RemoteLogActor = ray.remote(num_cpus=1)(LogActor)"),
        ("", "RemoteLogActor = ray.remote(LogActor)"),
    ],
)
def test_a_ray_actor_call_logs_through_the_actors_logger_built_from_config(
    tmp_path: Path, repo_catalog: Catalog, decorator: str, made: str
) -> None:
    files = {"pkg/__init__.py": "", "pkg/loggers.py": _LOGGERS, "pkg/worker.py": _WORKER}
    files["pkg/actor.py"] = _ACTOR.format(decorator=decorator, made=made)
    report = _scan(tmp_path, repo_catalog, files)

    assert _keys(report) == {
        "zz_step": "src/pkg/loggers.py:16",
        "worker/zz_loss": "src/pkg/worker.py:10",
        "worker/zz_time (s)": "src/pkg/worker.py:10",
    }


def test_a_remote_call_of_a_class_no_ray_made_an_actor_is_not_followed(
    tmp_path: Path, repo_catalog: Catalog
) -> None:
    files = {"pkg/__init__.py": "", "pkg/loggers.py": _LOGGERS, "pkg/worker.py": _WORKER}
    files["pkg/actor.py"] = _ACTOR.format(decorator="", made="")
    report = _scan(tmp_path, repo_catalog, files)

    assert _keys(report) == {"zz_step": "src/pkg/loggers.py:16"}


_RECIPE = """\
from pkg import config


class Recipe:
    def __init__(self, cfg):
        self.metric_logger = config.instantiate(cfg.metric_logger)

    def train(self, loss):
        self.metric_logger.log_dict({"zz_recipe_loss": loss}, step=1)
"""

_UNRELATED = """\
class Table:
    def log_dict(self, payload, step):
        self.rows.append(payload)
"""


def test_a_logger_built_from_config_logs_when_every_class_of_the_name_is_of_its_family(
    tmp_path: Path, repo_catalog: Catalog
) -> None:
    files = {"pkg/__init__.py": "", "pkg/loggers.py": _LOGGERS, "pkg/recipe.py": _RECIPE}
    report = _scan(tmp_path, repo_catalog, files)

    assert _keys(report) == {
        "zz_step": "src/pkg/loggers.py:16",
        "zz_recipe_loss": "src/pkg/recipe.py:9",
    }


def test_a_method_of_the_name_outside_the_family_keeps_the_receiver_unknown(
    tmp_path: Path, repo_catalog: Catalog
) -> None:
    files = {"pkg/__init__.py": "", "pkg/loggers.py": _LOGGERS, "pkg/recipe.py": _RECIPE}
    files["pkg/table.py"] = _UNRELATED
    report = _scan(tmp_path, repo_catalog, files)

    assert _keys(report) == {"zz_step": "src/pkg/loggers.py:16"}


_MEMORY = """\
def get_memory_stats(device):
    stats = {"zz_peak_active": 1.0, "zz_peak_reserved": 2.0}
    return stats
"""

_TRAIN = """\
import wandb

from pkg import training


def step():
    stats = training.get_memory_stats(device=None)
    wandb.log({f"perf/memory/{k}": v for k, v in stats.items()})
"""


@pytest.mark.parametrize(
    "package",
    [
        "from .memory import get_memory_stats\n",
        "from pkg.training.memory import get_memory_stats\n",
    ],
)
def test_a_function_a_package_re_exports_is_followed_to_the_dict_it_returns(
    tmp_path: Path, repo_catalog: Catalog, package: str
) -> None:
    files = {"pkg/__init__.py": "", "pkg/training/__init__.py": package}
    files["pkg/training/memory.py"] = _MEMORY
    files["pkg/train.py"] = _TRAIN
    report = _scan(tmp_path, repo_catalog, files)

    assert _keys(report) == {
        "perf/memory/zz_peak_active": "src/pkg/training/memory.py:2",
        "perf/memory/zz_peak_reserved": "src/pkg/training/memory.py:2",
    }


_DIMS = """\
import dataclasses


@dataclasses.dataclass
class Dims:
    width: int

    def utilization(self, seconds):
        return {"mfu": 0.5, "mbu": 0.25}
"""

_UTIL = """\
import wandb

{imports}


def report(dims: {annotation}, seconds: float) -> None:
    found = dims.utilization(seconds)
    wandb.log({{f"actor_{{k}}": v for k, v in found.items()}})
"""


@pytest.mark.parametrize(
    ("imports", "annotation"),
    [
        ("from pkg.dims import Dims", "Dims"),
        ("from pkg import dims as dims_lib", "dims_lib.Dims"),
        ("from pkg.dims import Dims", '"Dims"'),
        ("from pkg.dims import Dims", "Dims | None"),
        ("from typing import Optional\nfrom pkg.dims import Dims", "Optional[Dims]"),
    ],
)
def test_a_method_of_the_class_a_parameter_is_annotated_with_gives_its_returned_dict(
    tmp_path: Path, repo_catalog: Catalog, imports: str, annotation: str
) -> None:
    files = {"pkg/__init__.py": "", "pkg/dims.py": _DIMS}
    files["pkg/util.py"] = _UTIL.format(imports=imports, annotation=annotation)
    report = _scan(tmp_path, repo_catalog, files)

    assert _keys(report) == {"actor_mfu": "src/pkg/dims.py:9", "actor_mbu": "src/pkg/dims.py:9"}


@pytest.mark.parametrize("annotation", ["int", "Unknown", "list[Dims]", "Dims | Other"])
def test_a_parameter_annotated_with_no_scanned_class_keeps_its_call_unresolved(
    tmp_path: Path, repo_catalog: Catalog, annotation: str
) -> None:
    files = {"pkg/__init__.py": "", "pkg/dims.py": _DIMS}
    files["pkg/util.py"] = _UTIL.format(imports="from pkg.dims import Dims", annotation=annotation)
    report = _scan(tmp_path, repo_catalog, files)

    assert _keys(report) == {}
    assert [d.code for d in report.diagnostics] == ["SCAN_UNRESOLVED"]


_LEARNER = """\
import ray


@ray.remote(num_gpus=1)
class Learner:
    def step(self):
        local = {}
        local["loss/policy_avg"] = 0.1
        local["zz_lr"] = 1e-6
        return local, {"zz_lengths": [1, 2]}

    def ping(self):
        return {"zz_ping": 1}
"""

_DRIVER = """\
import ray
import wandb


def train_step(learners):
    {gather}
    {average}
    wandb.log(average)
"""


@pytest.mark.parametrize(
    ("gather", "average"),
    [
        (
            "metrics, arrays = zip(*ray.get([m.step.remote() for m in learners]))",
            "average = {k: sum(x[k] for x in metrics) / len(metrics) for k in metrics[0]}",
        ),
        (
            "refs = [m.step.remote() for m in learners]\n    metrics, _ = zip(*ray.get(refs))",
            "average = {}\n    for k in metrics[0]:\n        average[k] = metrics[0][k]",
        ),
        (
            "results = ray.get([learners[0].step.remote(), learners[1].step.remote()])\n"
            "    metrics, arrays = zip(*results)",
            "average = {}\n    for one in metrics:\n        average.update(one)",
        ),
    ],
)
def test_worker_dicts_gathered_over_ray_and_re_keyed_by_the_driver_keep_their_keys(
    tmp_path: Path, repo_catalog: Catalog, gather: str, average: str
) -> None:
    files = {"pkg/__init__.py": "", "pkg/learner.py": _LEARNER}
    files["pkg/driver.py"] = _DRIVER.format(gather=gather, average=average)
    report = _scan(tmp_path, repo_catalog, files)

    assert _keys(report) == {
        "loss/policy_avg": "src/pkg/learner.py:8",
        "zz_lr": "src/pkg/learner.py:9",
    }


def test_one_workers_dict_over_ray_get_is_the_dict_its_method_returns(
    tmp_path: Path, repo_catalog: Catalog
) -> None:
    driver = "import ray\nimport wandb\n\n\ndef run(m):\n    wandb.log(ray.get(m.ping.remote()))\n"
    files = {"pkg/__init__.py": "", "pkg/learner.py": _LEARNER, "pkg/driver.py": driver}
    report = _scan(tmp_path, repo_catalog, files)

    assert _keys(report) == {"zz_ping": "src/pkg/learner.py:13"}


def test_a_remote_call_of_no_actor_class_stays_unresolved(
    tmp_path: Path, repo_catalog: Catalog
) -> None:
    learner = _LEARNER.replace("@ray.remote(num_gpus=1)\n", "")
    driver = "import ray\nimport wandb\n\n\ndef run(m):\n    wandb.log(ray.get(m.ping.remote()))\n"
    files = {"pkg/__init__.py": "", "pkg/learner.py": learner, "pkg/driver.py": driver}
    report = _scan(tmp_path, repo_catalog, files)

    assert _keys(report) == {}
    assert [d.code for d in report.diagnostics] == ["SCAN_UNRESOLVED"]


def test_a_call_on_what_a_call_returned_is_no_call_of_the_family(
    tmp_path: Path, repo_catalog: Catalog
) -> None:
    handler = (
        "def get_logger():\n    return None\n\n\ndef emit(level, message):\n"
        "    get_logger().opt(depth=2).log_dict({'zz_not_a_key': 1}, step=level)\n"
    )
    files = {"pkg/__init__.py": "", "pkg/loggers.py": _LOGGERS, "pkg/handler.py": handler}
    report = _scan(tmp_path, repo_catalog, files)

    assert _keys(report) == {"zz_step": "src/pkg/loggers.py:16"}


_MONITORS = """\
class Monitor:
    def log(self, data, step=None):
        raise NotImplementedError


class TrackerMonitor(Monitor):
    def log(self, data, step=None):
        self.tracker.log_metrics(data, step=step)


class FileMonitor(Monitor):
    def log(self, data, step=None):
        print(data)


_ACTIVE = []


def log(data, step=None):
    for monitor in _ACTIVE:
        monitor.log(data, step=step)
"""

_LOOP = """\
from pkg import monitors


def step(loss):
    monitors.log({"zz_loss": loss}, step=1)
"""


@pytest.mark.parametrize("entries", [[], [{"call": "monitors.log", "metrics": [0, "data"]}]])
def test_a_call_a_scan_calls_entry_matches_is_judged_once(
    tmp_path: Path, repo_catalog: Catalog, entries: list[dict[str, object]]
) -> None:
    files = {"pkg/__init__.py": "", "pkg/monitors.py": _MONITORS, "pkg/loop.py": _LOOP}
    calls = merge_calls([parse_scan_call(entry) for entry in entries])
    root = tmp_path / "src"
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    report = scan([root], repo_catalog, calls, cwd=tmp_path, unlogged=False)

    found = [d.position.line for d in report.diagnostics if d.position is not None]
    assert _keys(report) == {"zz_loss": "src/pkg/loop.py:5"}
    assert found == [5]


_TWO_KINDS = """\
import mlflow
import wandb


class LoggerBase:
    def log_dict(self, payload, step):
        raise NotImplementedError


class WandbLogger(LoggerBase):
    def log_dict(self, payload, step):
        wandb.log(payload, step=step)


class FlowLogger(LoggerBase):
    def log_dict(self, payload, step):
        mlflow.log_metrics(payload, step=step)
"""


def test_a_key_reached_through_a_flat_logger_and_a_prefixed_one_is_one_finding(
    tmp_path: Path, repo_catalog: Catalog
) -> None:
    files = {"pkg/__init__.py": "", "pkg/loggers.py": _TWO_KINDS, "pkg/worker.py": _WORKER}
    files["pkg/actor.py"] = _ACTOR.format(decorator="@ray.remote", made="")
    report = _scan(tmp_path, repo_catalog, files)

    found = [
        d.message
        for d in report.diagnostics
        if d.code == "SCAN_UNDECLARED" and "'worker/zz_loss'" in d.message
    ]
    assert len(found) == 1, found
    assert _keys(report)["worker/zz_loss"] == "src/pkg/worker.py:10"
