"""What scan knows as logging calls with no configuration: the trackers' own calls, found by
what a name is bound to through imports, and every function that hands a parameter to one
(a wrapper), whatever its name."""

from __future__ import annotations

from pathlib import Path

import pytest

from codegen.catalog.model import Catalog
from codegen.scan.scanner import ScanReport, scan


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "src"
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def _scan(tmp_path: Path, catalog: Catalog, files: dict[str, str]) -> ScanReport:
    return scan([_tree(tmp_path, files)], catalog, cwd=tmp_path, unlogged=False)


def _keys(report: ScanReport) -> dict[str, str]:
    """Undeclared key -> where it is reported (``path:line``)."""
    found = {}
    for finding in report.diagnostics:
        if finding.code == "SCAN_UNDECLARED" and finding.position is not None:
            key = finding.message.split("'")[1]
            found[key] = f"{finding.position.path}:{finding.position.line}"
    return found


_LOGGING_UTILS = """\
import wandb


def log(args, metrics, step_key):
    if args.use_wandb:
        wandb.log(metrics)
"""

_TRAINER = """\
from pkg import logging_utils


def train(args, loss):
    log_dict = {"train/zz_gain": loss}
    log_dict["train/step"] = 3
    logging_utils.log(args, log_dict, step_key="train/step")
"""


def test_a_module_function_named_log_that_hands_its_parameter_to_wandb_is_a_wrapper(
    tmp_path: Path, repo_catalog: Catalog
) -> None:
    files = {"pkg/__init__.py": "", "pkg/logging_utils.py": _LOGGING_UTILS}
    files["pkg/trainer.py"] = _TRAINER
    report = _scan(tmp_path, repo_catalog, files)

    assert _keys(report) == {
        "train/zz_gain": "src/pkg/trainer.py:5",
        "train/step": "src/pkg/trainer.py:6",
    }
    assert not [d for d in report.diagnostics if d.code == "SCAN_UNRESOLVED"]


def test_a_trainer_log_override_stays_judged_at_its_callers_once(
    tmp_path: Path, repo_catalog: Catalog
) -> None:
    source = """\
from transformers import Trainer


class MyTrainer(Trainer):
    def log(self, logs, start_time=None):
        logs["zz_extra"] = 1.0
        super().log(logs, start_time)

    def step(self):
        self.log({"zz_loss": 0.5})
"""
    report = _scan(tmp_path, repo_catalog, {"t.py": source})

    assert _keys(report) == {"zz_extra": "src/t.py:6", "zz_loss": "src/t.py:10"}
    assert report.calls == 2  # the override's super().log and the step's self.log


_MIXIN = """\
from transformers import TrainerControl


class LoggingMixin:
    control: TrainerControl

    def log(self, logs, *args, **kwargs):
        logs["zz_custom"] = 1.0
        return super().log(logs, *args, **kwargs)

    def _maybe_log_save_evaluate(self, tr_loss, *args):
        logs = {"zz_loss": tr_loss}
        logs["zz_learning_rate"] = 0.1
        self.log(logs)
"""

_MIXED_TRAINER = """\
from collections import defaultdict

from {library} import {imported} as LibTrainer

from .mixin import LoggingMixin


class OtherMixin:
    pass


class MyTrainer(OtherMixin, LoggingMixin, LibTrainer):
    def __init__(self):
        self._metrics = {{"train": defaultdict(list), "eval": defaultdict(list)}}

    def step(self, mode):
        self._metrics[mode]["zz_reward"].append(1.0)

    def log(self, logs, start_time=None):
        mode = "train"
        metrics = {{key: sum(val) / len(val) for key, val in self._metrics[mode].items()}}
        logs.update(metrics)
        super().log(logs, start_time)
"""


@pytest.mark.parametrize(
    ("library", "imported"),
    [
        ("trl", "GRPOTrainer"),
        ("transformers", "Seq2SeqTrainer"),
        ("transformers.trainer", "Trainer"),
    ],
)
def test_a_trainer_reached_through_mixins_and_an_aliased_library_trainer_logs_its_keys(
    tmp_path: Path, repo_catalog: Catalog, library: str, imported: str
) -> None:
    files = {"pkg/__init__.py": "", "pkg/mixin.py": _MIXIN}
    files["pkg/trainer.py"] = _MIXED_TRAINER.format(library=library, imported=imported)
    report = _scan(tmp_path, repo_catalog, files)

    assert _keys(report) == {
        "zz_reward": "src/pkg/trainer.py:17",
        "zz_custom": "src/pkg/mixin.py:8",
        "zz_loss": "src/pkg/mixin.py:12",
        "zz_learning_rate": "src/pkg/mixin.py:13",
    }


@pytest.mark.parametrize(
    ("library", "imported"),
    [
        ("mylib", "GRPOTrainer"),  # a Trainer of a library not known to derive from Trainer
        ("trl", "GRPOConfig"),  # not a Trainer of a known one
        (".local", "GRPOTrainer"),  # a relative import that is not scanned
    ],
)
def test_a_class_not_known_to_be_a_trainer_logs_nothing_through_self_log(
    tmp_path: Path, repo_catalog: Catalog, library: str, imported: str
) -> None:
    files = {"pkg/__init__.py": "", "pkg/mixin.py": _MIXIN}
    files["pkg/trainer.py"] = _MIXED_TRAINER.format(library=library, imported=imported)
    report = _scan(tmp_path, repo_catalog, files)

    assert _keys(report) == {}
    assert report.calls == 0


_PLAIN_MIXIN = _MIXIN.replace("from transformers import TrainerControl", "# no import").replace(
    "control: TrainerControl", "control: object"
)
"""The same mixin, line for line, in a file whose text never names ``Trainer``."""


@pytest.mark.parametrize(
    ("library", "imported"),
    [("trl", "GRPOTrainer"), ("transformers", "Trainer")],
)
def test_a_mixin_whose_file_never_names_trainer_logs_through_the_trainer_it_is_mixed_into(
    tmp_path: Path, repo_catalog: Catalog, library: str, imported: str
) -> None:
    assert b"Trainer" not in _PLAIN_MIXIN.encode()
    files = {"pkg/__init__.py": "", "pkg/mixin.py": _PLAIN_MIXIN}
    files["pkg/trainer.py"] = _MIXED_TRAINER.format(library=library, imported=imported)
    report = _scan(tmp_path, repo_catalog, files)

    assert _keys(report) == {
        "zz_reward": "src/pkg/trainer.py:17",
        "zz_custom": "src/pkg/mixin.py:8",
        "zz_loss": "src/pkg/mixin.py:12",
        "zz_learning_rate": "src/pkg/mixin.py:13",
    }


@pytest.mark.parametrize(
    ("library", "imported"),
    [("mylib", "GRPOTrainer"), ("trl", "GRPOConfig")],
)
def test_a_mixin_of_a_class_not_known_to_be_a_trainer_logs_nothing(
    tmp_path: Path, repo_catalog: Catalog, library: str, imported: str
) -> None:
    files = {"pkg/__init__.py": "", "pkg/mixin.py": _PLAIN_MIXIN}
    files["pkg/trainer.py"] = _MIXED_TRAINER.format(library=library, imported=imported)
    report = _scan(tmp_path, repo_catalog, files)

    assert _keys(report) == {}
    assert report.calls == 0


_BASE_WITH_ACCELERATOR = """\
from accelerate import Accelerator


class BaseTrainer:
    def __init__(self):
        self.accelerator = Accelerator(log_with="wandb")

    def loop(self):
        self.accelerator.log({"zz_base": 1.0}, step=0)
"""


@pytest.mark.parametrize(
    ("base_import", "base"),
    [("from .base import BaseTrainer", "BaseTrainer"), ("from . import base", "base.BaseTrainer")],
)
def test_a_receiver_a_base_class_binds_in_another_file_logs_in_its_subclasses(
    tmp_path: Path, repo_catalog: Catalog, base_import: str, base: str
) -> None:
    sub = f"""\
{base_import}


class Middle({base}):
    pass


class PPOTrainer(Middle):
    def make_experience(self, chunks):
        stats = {{}}
        stats["zz_rollout_time"] = 1.0
        stats = {{k: v / chunks for k, v in stats.items()}}
        stats["zz_kl_ctl_value"] = 0.1
        self.accelerator.log(stats, step=1)
"""
    files = {"pkg/__init__.py": "", "pkg/base.py": _BASE_WITH_ACCELERATOR, "pkg/ppo.py": sub}
    report = _scan(tmp_path, repo_catalog, files)

    assert _keys(report) == {
        "zz_base": "src/pkg/base.py:9",
        "zz_rollout_time": "src/pkg/ppo.py:11",
        "zz_kl_ctl_value": "src/pkg/ppo.py:13",
    }


def test_a_same_named_receiver_of_a_class_not_deriving_from_the_base_logs_nothing(
    tmp_path: Path, repo_catalog: Catalog
) -> None:
    other = """\
from .base import BaseTrainer


class Reporter:
    def __init__(self, accelerator):
        self.accelerator = accelerator
        self.trainer = BaseTrainer()

    def report(self):
        self.accelerator.log({"zz_other": 1.0})
"""
    files = {"pkg/__init__.py": "", "pkg/base.py": _BASE_WITH_ACCELERATOR, "pkg/other.py": other}
    report = _scan(tmp_path, repo_catalog, files)

    assert _keys(report) == {"zz_base": "src/pkg/base.py:9"}


_LOOP_OVER_MICRO_BATCHES = """\
import wandb

from .config import LossConfig


class Learner:
    def __init__(self, config):
        self.method{annotation} = config.method

    def loss(self, batch):
        return self.method.loss(batch)

    def learn(self, batches):
        for micro_batches in batches:
            accumulated = []
            for micro in micro_batches:
                _, stats = self.loss(micro)
                accumulated.append(stats)
            stats = {{k: sum(s[k] for s in accumulated) / 2 for k in accumulated[0]}}
            wandb.log(stats)
"""

_LOSS_CONFIG = """\
class LossConfig:
    def loss(self, batch):
        stats = {"zz_policy_loss": 1.0}
        stats["zz_value_loss"] = 2.0
        return 0.0, stats
"""


def test_a_loss_dict_from_an_annotated_attributes_method_averaged_over_micro_batches_is_found(
    tmp_path: Path, repo_catalog: Catalog
) -> None:
    loop = _LOOP_OVER_MICRO_BATCHES.format(annotation=": LossConfig")
    files = {"pkg/__init__.py": "", "pkg/config.py": _LOSS_CONFIG, "pkg/learner.py": loop}
    report = _scan(tmp_path, repo_catalog, files)

    assert _keys(report) == {
        "zz_policy_loss": "src/pkg/config.py:3",
        "zz_value_loss": "src/pkg/config.py:4",
    }


def test_a_loss_dict_from_an_untyped_attributes_method_stays_unresolved(
    tmp_path: Path, repo_catalog: Catalog
) -> None:
    loop = _LOOP_OVER_MICRO_BATCHES.format(annotation="")
    files = {"pkg/__init__.py": "", "pkg/config.py": _LOSS_CONFIG, "pkg/learner.py": loop}
    report = _scan(tmp_path, repo_catalog, files)

    assert _keys(report) == {}
    assert [d.code for d in report.diagnostics] == ["SCAN_UNRESOLVED"]


def test_a_function_named_log_doing_mathematics_is_no_wrapper(
    tmp_path: Path, repo_catalog: Catalog
) -> None:
    source = """\
import numpy as np


def log(x, base):
    return np.log(x) / np.log(base)


def run():
    return log({"not_a_key": 1}, 2)
"""
    report = _scan(tmp_path, repo_catalog, {"m.py": source})

    assert report.diagnostics == []
    assert report.calls == 0


@pytest.mark.parametrize(
    ("source", "key"),
    [
        ("import wandb\nrun = wandb.init()\nrun.log({'zz_a': 1})\n", "zz_a"),
        (
            "import wandb\nclass T:\n  def __init__(self):\n    self.run = wandb.init()\n"
            "  def step(self):\n    self.run.log({'zz_a': 1})\n",
            "zz_a",
        ),
        ("import swanlab as sl\nsl.log({'zz_a': 1})\n", "zz_a"),
        ("import trackio\ntrackio.log({'zz_a': 1})\n", "zz_a"),
        (
            "from tensorboardX import SummaryWriter\nw = SummaryWriter()\n"
            "w.add_scalars('zz', {'a': 1}, 3)\n",
            "a",
        ),
        ("from accelerate import Accelerator\nacc = Accelerator()\nacc.log({'zz_a': 1})\n", "zz_a"),
        (
            "import lightning as L\nclass M(L.LightningModule):\n  def training_step(self, b):\n"
            "    self.log('zz_a', 1.0)\n",
            "zz_a",
        ),
        (
            "from comet_ml import Experiment\nexp = Experiment()\nexp.log_metric('zz_a', 1)\n",
            "zz_a",
        ),
        (
            "from clearml import Logger\nLogger.current_logger().report_scalar('zz', 'a', 1, 0)\n",
            "a",
        ),
        ("from aim import Run\nrun = Run()\nrun.track(1.0, name='zz_a')\n", "zz_a"),
        ("from metric_catalog import tee_flat\ntee_flat({'zz_a': 1})\n", "zz_a"),
        ("from metric_catalog.tee import tee_metrics\ntee_metrics({'a': 1}, 'zz')\n", "a"),
        (
            "from metric_catalog.adapters import TrackingTee\nt = TrackingTee(inner)\n"
            "t.log({'zz_a': 1}, 3)\n",
            "zz_a",
        ),
        (
            "from verl.utils.tracking import Tracking\nt = Tracking()\n"
            "t.log(values={'zz_a': 1}, step=3)\n",
            "zz_a",
        ),
        (
            "from verl.utils.tracking import Tracking\nt = Tracking()\n"
            "t.log(step=3, data={'zz_a': 1})\n",
            "zz_a",
        ),
    ],
    ids=[
        "wandb-run-from-init",
        "wandb-run-on-self",
        "swanlab-aliased",
        "trackio",
        "tensorboard-add-scalars",
        "accelerate",
        "lightning-log",
        "comet",
        "clearml",
        "aim",
        "tee-flat",
        "tee-metrics",
        "tracking-tee",
        "tracking-values-keyword",
        "tracking-data-keyword",
    ],
)
def test_a_trackers_logging_call_is_scanned_with_no_configuration(
    tmp_path: Path, repo_catalog: Catalog, source: str, key: str
) -> None:
    report = _scan(tmp_path, repo_catalog, {"m.py": source})

    assert key in _keys(report), report.to_text()
    assert report.calls == 1


@pytest.mark.parametrize(
    "source",
    [
        "import logging\nlog = logging.getLogger()\nlog.log(10, {'zz_a': 1})\n",
        "import numpy as np\nnp.log({'zz_a': 1})\n",
        "class Run:\n  def track(self, v, name):\n    pass\n"
        "r = object()\nr.track(1, name='zz_a')\n",
        "import wandb\nrun = make_run()\nrun.log({'zz_a': 1})\n",
    ],
    ids=["logging-log", "numpy-log", "track-not-on-a-run", "log-on-an-unknown-object"],
)
def test_a_call_named_like_a_trackers_on_something_else_is_not_scanned(
    tmp_path: Path, repo_catalog: Catalog, source: str
) -> None:
    report = _scan(tmp_path, repo_catalog, {"m.py": source})

    assert report.calls == 0
    assert report.diagnostics == []


_GENERATED = """\
from typing import Final

from metric_catalog.vocabulary import TeedMetric

LOSS: Final = TeedMetric(logger_key="zz_loss", name="rl.zz.loss", prefix="train")
LOSS_KEY: Final = "zz_loss"
LOSS_LOGGED_KEY: Final = "train/zz_loss"
EVAL_LOSS: Final = TeedMetric(logger_key="zz_eval", name="rl.zz.eval", prefix="eval_")
BARE: Final = TeedMetric(logger_key="zz_bare", name="rl.zz.bare", prefix="")
OPEN: Final = TeedMetric(logger_key=NAME, name="rl.zz.open", prefix="train")
"""


@pytest.mark.parametrize(
    ("expression", "key"),
    [
        ("T.LOSS.logged_key", "train/zz_loss"),
        ("T.LOSS_LOGGED_KEY", "train/zz_loss"),
        ('f"train/{T.LOSS_KEY}"', "train/zz_loss"),
        ("T.EVAL_LOSS.logged_key", "eval_zz_eval"),
        ("T.BARE.logged_key", "zz_bare"),
    ],
    ids=["logged-key-attribute", "logged-key-constant", "key-constant", "glued", "no-prefix"],
)
def test_a_key_from_a_generated_rows_constant_is_resolved_through_its_module(
    tmp_path: Path, repo_catalog: Catalog, expression: str, key: str
) -> None:
    trainer = (
        "from metric_catalog import tee_flat\n"
        "from telemetry.generated import train as T\n"
        f"def step(v):\n    tee_flat({{{expression}: v}})\n"
    )
    files = {"telemetry/generated/train.py": _GENERATED, "trainer.py": trainer}
    report = _scan(tmp_path, repo_catalog, files)

    assert _keys(report) == {key: "src/trainer.py:4"}


def test_a_logged_key_of_a_row_whose_key_is_not_literal_stays_unresolved(
    tmp_path: Path, repo_catalog: Catalog
) -> None:
    trainer = (
        "from metric_catalog import tee_flat\n"
        "from telemetry.generated import train as T\n"
        "def step(v):\n    tee_flat({T.OPEN.logged_key: v})\n"
    )
    files = {"telemetry/generated/train.py": _GENERATED, "trainer.py": trainer}
    report = _scan(tmp_path, repo_catalog, files)

    assert _keys(report) == {}
    assert [d.code for d in report.diagnostics] == ["SCAN_UNRESOLVED"]


@pytest.mark.parametrize(
    ("call", "keys"),
    [
        ("scalar(3, zz_loss=v, zz_kl=k)", {"zz_loss": 10, "zz_kl": 10}),
        ("scalar(step=3, zz_loss=v)", {"zz_loss": 10}),
        ("scalar(3, **extra)", {"zz_lr": 9}),
        ("scalar(3, zz_kl=k, **extra)", {"zz_kl": 10, "zz_lr": 9}),
    ],
    ids=["keywords", "step-by-keyword", "double-star-dict", "both"],
)
def test_keys_passed_as_keywords_to_a_wrappers_double_star_parameter_are_found(
    tmp_path: Path, repo_catalog: Catalog, call: str, keys: dict[str, int]
) -> None:
    source = (
        "import wandb\n\n\ndef scalar(step, **stats):\n    wandb.log(stats, step=step)\n\n\n"
        f"def train(v, k):\n    extra = dict(zz_lr=1e-3)\n    {call}\n"
    )
    report = _scan(tmp_path, repo_catalog, {"m.py": source})

    assert _keys(report) == {key: f"src/m.py:{line}" for key, line in keys.items()}
    assert not [d for d in report.diagnostics if d.code == "SCAN_UNRESOLVED"]


def test_a_keyword_a_named_parameter_takes_is_no_key(tmp_path: Path, repo_catalog: Catalog) -> None:
    source = (
        "import wandb\n\ndef scalar(step, *, commit=True, **stats):\n"
        "    wandb.log(stats, step=step)\n\ndef train():\n    scalar(step=1, commit=False)\n"
    )
    report = _scan(tmp_path, repo_catalog, {"m.py": source})

    assert _keys(report) == {}


def test_a_text_logged_on_a_run_from_init_is_no_finding(
    tmp_path: Path, repo_catalog: Catalog
) -> None:
    source = "import mylog\nlogger = mylog.init()\nlogger.log('started')\nlogger.log(level)\n"
    report = _scan(tmp_path, repo_catalog, {"m.py": source})

    assert report.diagnostics == []


@pytest.mark.parametrize(
    ("imports", "mapped"),
    [
        ("import tree", "tree.map_structure(lambda x: x.mean(), infos)"),
        ("import jax", "jax.tree_util.tree_map(lambda x: x.mean(), infos)"),
        ("from torch.utils._pytree import tree_map", "tree_map(float, tree=infos)"),
    ],
    ids=["dm-tree", "jax", "torch-pytree"],
)
def test_a_map_over_a_structure_keeps_its_keys(
    tmp_path: Path, repo_catalog: Catalog, imports: str, mapped: str
) -> None:
    source = (
        f"import wandb\n{imports}\n\n\ndef step(loss):\n    infos = {{}}\n"
        f'    infos["zz_loss"] = loss\n'
        f'    out = {{"train/%s" % k: v for k, v in {mapped}.items()}}\n'
        "    wandb.log(out)\n"
    )
    report = _scan(tmp_path, repo_catalog, {"m.py": source})

    assert _keys(report) == {"train/zz_loss": "src/m.py:7"}


def test_a_map_structure_of_another_module_is_no_pass_through(
    tmp_path: Path, repo_catalog: Catalog
) -> None:
    source = (
        "import wandb\nimport mylib\n\n\ndef step(infos):\n"
        "    wandb.log(mylib.map_structure(str, {'zz_loss': 1}))\n"
    )
    report = _scan(tmp_path, repo_catalog, {"m.py": source})

    assert _keys(report) == {}
    assert [d.code for d in report.diagnostics] == ["SCAN_UNRESOLVED"]


_TEE_WANDB_LOG = """\
import wandb
from metric_catalog.adapters import tee_wandb_log

run = wandb.init(project="myrl")
{binding} = tee_wandb_log(run, loop="train")
for step in range(3):
    {call}({{"train/zz_teed": 0.4}}, step=step)
"""


def test_the_log_function_tee_wandb_log_returns_is_a_logging_call(
    tmp_path: Path, repo_catalog: Catalog
) -> None:
    """The README's quick start: ``log = tee_wandb_log(run)`` then ``log({...})``. (Only a
    name scan already reads calls of, such as ``log``: the analysis visits the lines that
    mention one.)"""
    text = _TEE_WANDB_LOG.format(binding="log", call="log")
    report = _scan(tmp_path, repo_catalog, {"train.py": text})
    assert _keys(report) == {"train/zz_teed": "src/train.py:7"}


def test_a_function_another_call_returned_is_no_logging_call(
    tmp_path: Path, repo_catalog: Catalog
) -> None:
    text = _TEE_WANDB_LOG.replace("tee_wandb_log(run", "make_logger(run").replace(
        "from metric_catalog.adapters import tee_wandb_log", "from mylib import make_logger"
    )
    report = _scan(tmp_path, repo_catalog, {"train.py": text.format(binding="log", call="log")})
    assert _keys(report) == {}
