"""Key-value loggers: keys recorded one call at a time into a dict field that a dump hands
to writers looping over its keys into a sink (:mod:`codegen.scan.kvfields`).

Each case is a package of two files: ``logger.py`` (the logger and its writers) and
``algo.py`` (the training code calling it). A firing case reports the recorded key at the
caller's line; a non-firing case reports no key at all (unresolved parts may remain).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from codegen.catalog.model import Catalog
from codegen.catalog.pipeline import load_and_check
from codegen.scan.scanner import scan

CATALOG = """\
owner: tests.kvfields
module: kvfields
description: A row no case logs.
prefix: ""
teed:
  - logger_key: zz_not_logged
    name: rl.kvfields.unused
    kind: gauge
    unit: "1"
    description: A row the cases never log.
"""

WRITERS = """\
from torch.utils.tensorboard import SummaryWriter


class BoardOutput:
    def __init__(self, folder):
        self.board = SummaryWriter(log_dir=folder)

    def write(self, pairs, skipped, step=0):
        for (name, value), (_, skip) in zip(sorted(pairs.items()), sorted(skipped.items())):
            if skip:
                continue
            self.board.add_scalar(name, value, step)


class TextOutput:
    def __init__(self, stream):
        self.stream = stream

    def write(self, pairs, skipped, step=0):
        for name, value in pairs.items():
            self.stream.write(f"{name}: {value}\\n")
"""

LOGGER = (
    WRITERS
    + """

class Ledger:
    def __init__(self, outputs):
        self.current = {}
        self.skipped = {}
        self.outputs = outputs

    def note(self, name, value, skip=None):
        self.current[name] = value
        self.skipped[name] = skip

    def note_mean(self, name, value):
        self.current[name] = (self.current.get(name, 0.0) + value) / 2

    def absorb(self, values):
        self.current.update(values)

    def tick(self, seconds):
        self.current["clock/seconds"] = seconds

    def flush(self, step=0):
        for out in self.outputs:
            out.write(self.current, self.skipped, step)
        self.current.clear()
"""
)

FIRING = {
    "literal key": (['self.ledger.note("train/loss", 1.0)'], "train/loss"),
    "constant in an f-string": (['self.ledger.note(f"{HEAD}/kl", 2.0)'], "train/kl"),
    "concatenated literals": (['self.ledger.note("rollout/" + "reward", 2.0)'], "rollout/reward"),
    "keyword argument": (['self.ledger.note(value=1, name="time/fps")'], "time/fps"),
    "a second key-writing method": (['self.ledger.note_mean("eval/score", 3.0)'], "eval/score"),
    "through the caller's own wrapper": (
        ['self.scalar("train/lr", 0.1)'],
        "train/lr",
    ),
    "a dict absorbed by update": (['self.ledger.absorb({"train/grad_norm": 1.0})'], None),
}
"""Case -> (lines of ``Algo.step``, the key reported at the first line; ``None``: the key
is written where the dict is, on the same line)."""


@pytest.fixture(scope="module")
def catalog(tmp_path_factory: pytest.TempPathFactory) -> Catalog:
    """A catalog declaring none of the cases' keys."""
    folder = tmp_path_factory.mktemp("kvfields")
    (folder / "c.yaml").write_text(CATALOG, encoding="utf-8")
    result = load_and_check([folder / "c.yaml"], root=folder, lint=False)
    assert result.ok, result.diagnostics
    return result.catalog


def _scan(
    folder: Path, catalog: Catalog, logger: str, body: list[str]
) -> list[tuple[str, str, int]]:
    """Scan the package of ``logger`` and an ``Algo`` whose ``step`` runs ``body``: (code,
    file, line) of each finding, plus the message for keys."""
    algo = [
        'HEAD = "train"',
        "",
        "class Algo:",
        "    def scalar(self, label, value):",
        "        self.ledger.note(label, value)",
        "",
        "    def step(self):",
        *(f"        {line}" for line in body),
    ]
    (folder / "logger.py").write_text(logger, encoding="utf-8")
    (folder / "algo.py").write_text("\n".join(algo) + "\n", encoding="utf-8")
    report = scan([folder], catalog, cwd=folder, unlogged=False)
    return [(d.code, d.message, d.position.line if d.position else 0) for d in report.diagnostics]


def _step_line(index: int = 0) -> int:
    """The line of ``step``'s ``index``-th statement in ``algo.py``."""
    return 8 + index


@pytest.mark.parametrize("case", sorted(FIRING))
def test_a_key_recorded_into_a_dumped_field_is_found_at_the_callers_line(
    tmp_path: Path, catalog: Catalog, case: str
) -> None:
    body, key = FIRING[case]
    found = _scan(tmp_path, catalog, LOGGER, body)
    keys = [(message, line) for code, message, line in found if code == "SCAN_UNDECLARED"]
    expected = key or "train/grad_norm"
    literal_field = [k for k in keys if "'clock/seconds'" in k[0]]
    assert len(literal_field) == 1  # the literal the logger writes into its own field
    keys = [k for k in keys if k not in literal_field]
    assert len(keys) == 1, found
    assert f"key '{expected}'" in keys[0][0]
    assert keys[0][1] == _step_line()


def test_a_key_known_only_at_run_time_is_unresolved_at_the_caller(
    tmp_path: Path, catalog: Catalog
) -> None:
    body = ["for name, value in self.stats.items():", "    self.ledger.note(name, value)"]
    found = _scan(tmp_path, catalog, LOGGER, body)
    at_caller = [f for f in found if f[2] == _step_line(1)]
    assert [code for code, _, _ in at_caller] == ["SCAN_UNRESOLVED"], found
    assert "self.ledger.note" in at_caller[0][1]
    assert not [f for f in found if f[0] == "SCAN_UNDECLARED" and "clock" not in f[1]]


TAKERS = {
    "a key call": "self.writer.add_scalar(name, value)",
    "a dict call": "wandb.log({name: value})",
}
"""Case -> the tracker call of ``note(self, name, value)``."""


@pytest.mark.parametrize("case", sorted(TAKERS))
def test_a_parameter_logged_as_a_key_makes_its_function_take_the_key(
    tmp_path: Path, catalog: Catalog, case: str
) -> None:
    logger = (
        "import wandb\n"
        "from torch.utils.tensorboard import SummaryWriter\n\n\n"
        "class Board:\n"
        "    def __init__(self):\n"
        "        self.writer = SummaryWriter()\n\n"
        "    def note(self, name, value):\n"
        f"        {TAKERS[case]}\n"
    )
    found = _scan(tmp_path, catalog, logger, ['self.ledger.note("train/entropy", 0.5)'])
    keys = [(m, line) for code, m, line in found if code == "SCAN_UNDECLARED"]
    assert len(keys) == 1, found
    assert "key 'train/entropy'" in keys[0][0]
    assert keys[0][1] == _step_line()
    assert not [f for f in found if f[0] == "SCAN_UNRESOLVED"]  # the sink's {name}: given


NON_FIRING = {
    "a field no sink reads": LOGGER.replace("out.write(self.current", "out.write(dict()"),
    "writers that only print": LOGGER.replace(
        "self.board.add_scalar(name, value, step)", "print(name, value)"
    ),
    "a sink keyed by a loop's value, not its key": LOGGER.replace(
        "self.board.add_scalar(name, value, step)", "self.board.add_scalar(skip, value, step)"
    ),
    "another class with a method of the same name": LOGGER
    + "\n\nclass Replay:\n    def note(self, name, value):\n        self.rows.append(name)\n",
}
"""Case -> a logger whose ``note`` calls log no key the scan can vouch for."""


@pytest.mark.parametrize("case", sorted(NON_FIRING))
def test_a_recording_method_whose_field_reaches_no_sink_logs_no_key(
    tmp_path: Path, catalog: Catalog, case: str
) -> None:
    found = _scan(tmp_path, catalog, NON_FIRING[case], ['self.ledger.note("train/loss", 1.0)'])
    assert not [f for f in found if f[0] == "SCAN_UNDECLARED" and "train/loss" in f[1]], found
