"""Keys a module-level tracker records under the scopes open around the call (.scopes,
.instances): which scopes prefix a key, and which code is no scope or no shared object."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from codegen.catalog.model import Catalog
from codegen.scan.calls import merge_calls
from codegen.scan.scanner import scan

_KEY = re.compile(r"key '([^']*)'")

TRACKER = """
from contextlib import contextmanager

import wandb


class Tracker:
    def __init__(self):
        self.stack = []
        self.stats = {{}}

    @contextmanager
    def scope(self, name):
        self.stack.append(name)
        yield
        self.stack.pop()

    @contextmanager
    def quiet(self, name):
        yield

    def _full(self, key):
        if not self.stack:
            return key
        return {join}

    def add(self, **kwargs):
        for key, value in kwargs.items():
            self.stats[self._full(key)] = value

    def export(self):
        return dict(self.stats)


{objects}


def flush():
    wandb.log(DEFAULT.export())
"""

PLAIN = "DEFAULT = Tracker()\nOTHER = Tracker()"


def _keys(tmp_path: Path, catalog: Catalog, join: str, objects: str, body: str) -> set[str]:
    (tmp_path / "tracker.py").write_text(
        TRACKER.format(join=join, objects=objects), encoding="utf-8"
    )
    (tmp_path / "work.py").write_text(
        "from tracker import DEFAULT, OTHER\n\n\ndef step():\n" + body, encoding="utf-8"
    )
    report = scan([tmp_path], catalog, merge_calls([]), cwd=tmp_path, unlogged=False)
    found = set()
    for diagnostic in report.diagnostics:
        match = _KEY.search(diagnostic.message)
        if match is not None:
            found.add(f"{diagnostic.code}:{match.group(1)}")
    return found


@pytest.mark.parametrize(
    ("join", "objects", "body", "expected"),
    [
        (
            '"/".join(self.stack + [key])',
            PLAIN,
            '    with DEFAULT.scope("actor"):\n        DEFAULT.add(probe=1.0)\n',
            {"SCAN_UNDECLARED:actor/probe"},
        ),
        (
            '":".join([*self.stack, key])',
            PLAIN,
            '    with DEFAULT.scope("a"):\n        with DEFAULT.scope("b"):\n'
            "            DEFAULT.add(gauge=1.0)\n",
            {"SCAN_UNDECLARED:a:b:gauge"},
        ),
        (
            '"/".join(self.stack + [key])',
            PLAIN,
            '    with DEFAULT.scope("actor"):\n        pass\n    DEFAULT.add(probe=1.0)\n',
            {"SCAN_UNDECLARED:probe"},
        ),
        (
            '"/".join(self.stack + [key])',
            PLAIN,
            '    with OTHER.scope("critic"):\n        DEFAULT.add(probe=1.0)\n',
            {"SCAN_UNDECLARED:probe"},
        ),
        (
            '"/".join(self.stack + [key])',
            PLAIN,
            '    with DEFAULT.quiet("critic"):\n        DEFAULT.add(probe=1.0)\n',
            {"SCAN_UNDECLARED:probe"},
        ),
        (
            '"/".join(self.stack + [key])',
            PLAIN,
            '    with DEFAULT.scope("actor"):\n        OTHER.add(probe=1.0)\n',
            set(),
        ),
        (
            '"/".join(self.stack + [key])',
            "DEFAULT = Tracker()\nDEFAULT = Tracker()\nOTHER = Tracker()",
            "    DEFAULT.add(probe=1.0)\n",
            set(),
        ),
    ],
    ids=[
        "a-scope-prefixes-its-block",
        "nested-scopes-join-with-the-trackers-own-separator",
        "a-closed-scope-prefixes-nothing-after-it",
        "another-objects-scope-does-not-prefix",
        "a-context-manager-pushing-nothing-is-no-scope",
        "another-object-records-nothing-the-getter-reads",
        "a-name-bound-twice-is-not-one-object",
    ],
)
def test_scopes_prefix_exactly_the_keys_recorded_inside_them(
    tmp_path: Path,
    repo_catalog: Catalog,
    *,
    join: str,
    objects: str,
    body: str,
    expected: set[str],
) -> None:
    assert _keys(tmp_path, repo_catalog, join, objects, body) == expected


def test_a_composer_that_drops_the_key_is_not_followed(
    tmp_path: Path, repo_catalog: Catalog
) -> None:
    keys = _keys(
        tmp_path,
        repo_catalog,
        '"/".join(self.stack)',
        PLAIN,
        '    with DEFAULT.scope("actor"):\n        DEFAULT.add(probe=1.0)\n',
    )
    assert not any(key.startswith("SCAN_UNDECLARED") for key in keys)
