"""A wave of wrappers skips a module whose calls of their names all go elsewhere.

OpenRLHF's trainers each define and call their own ``save_logs_and_checkpoints``: once one
of them becomes a wrapper in a later wave, the other trainers' calls of that name go to
their own methods, and analysing those modules again would find nothing. The skip must
leave what is found exactly as analysing every module gives it.
"""

from __future__ import annotations

import ast

import pytest

from codegen.scan import extract
from codegen.scan.calls import DEFAULT_SCAN_CALLS
from codegen.scan.extract import Project, _calls_named
from codegen.scan.model import Logged
from codegen.scan.sources import Module
from codegen.scan.values import shape_text

_TRAINER = """\
import wandb


class {cls}Trainer:
    def log_train(self, logs):
        wandb.log({{"train/" + k: v for k, v in logs.items()}})

    def save_logs(self, logs):
        self.log_train(logs)

    def fit(self):
        self.save_logs({{"{cls}_loss": 1.0}})
"""

_LATE = """\
import wandb


class LateTrainer:
    def log_train(self, logs):
        wandb.log({"train/" + k: v for k, v in logs.items()})

    def step(self, logs):
        self.log_train(logs)

    def save_logs(self, logs):
        self.step(logs)

    def fit(self):
        self.save_logs({"late_loss": 2.0})
"""


def _project(sources: dict[str, str]) -> Project:
    project = Project(DEFAULT_SCAN_CALLS)
    for name, text in sources.items():
        source = text.encode()
        project.add(Module(name, f"/t/{name}", source, ast.parse(source)))
    return project


def _found(sources: dict[str, str]) -> list[tuple[str, int, tuple[str, ...]]]:
    found = []
    for logged in _project(sources).logged():
        keys = tuple(sorted(shape_text(key.shape) for key in logged.keys))
        found.append((logged.where.path, logged.where.line, keys))
    return sorted(found)


_PLAIN = """\
class PlainTrainer:
    def save_logs(self, logs):
        print(logs)

    def fit(self):
        self.save_logs({"plain_loss": 3.0})
"""

_SOURCES = {
    "early.py": _TRAINER.format(cls="Early"),
    "other.py": _TRAINER.format(cls="Other"),
    "late.py": _LATE,
    "plain.py": _PLAIN,
}


def test_a_later_waves_wrapper_skips_the_trainers_calling_their_own_wrapper(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    every = _found(_SOURCES)  # with the skip
    analysed: list[tuple[str, tuple[str, ...]]] = []
    run = extract._Scanner.run

    def counted(self: extract._Scanner) -> list[Logged]:
        analysed.append((self.module.shown, tuple(sorted(self.wrappers))))
        return run(self)

    monkeypatch.setattr(extract._Scanner, "run", counted)
    _found(_SOURCES)
    # ``save_logs`` of LateTrainer joins a wave after the others': early.py and other.py
    # call their own (an earlier wave's wrapper), plain.py its own that logs nothing, so
    # that module was never analysed for it and is read again.
    late_wave = [shown for shown, names in analysed if names == ("save_logs",)]
    assert late_wave == ["late.py", "plain.py"]
    monkeypatch.setattr(Project, "_misses", lambda *_: False)
    assert _found(_SOURCES) == every
    assert any("Early_loss" in " ".join(keys) for _, _, keys in every)
    assert any("late_loss" in " ".join(keys) for _, _, keys in every)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("class C:\n    def f(self):\n        self.w(1)\n", [("w", "C")]),
        ("def f(self):\n    self.w(1)\n", [("w", None)]),  # no class: not skippable
        ("class C:\n    def f(self):\n        def g():\n            w(2)\n", [("w", "C")]),
        ("class C:\n    x = w(3)\n", []),  # a class body is not analysed
        ("class C:\n    @w\n    def f(self):\n        pass\n", []),  # nor a decorator
        ("def f():\n    class D:\n        def g(self):\n            o.w()\n", [("w", "D")]),
        ("w(1)\nv(2)\n", [("w", None)]),
    ],
)
def test_the_calls_of_a_waves_names_come_with_their_methods_class(
    text: str, expected: list[tuple[str, str | None]]
) -> None:
    tree = ast.parse(text)
    lines = list(range(1, len(text.splitlines()) + 1))
    found = _calls_named(tree, lines, {"w"})
    names = [(ast.unparse(call.func).rpartition(".")[2], cls) for call, cls in found]
    assert names == expected
