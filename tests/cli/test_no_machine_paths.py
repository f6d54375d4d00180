"""No committed file names an absolute path of the machine it was made on.

Benchmarks, profiles and generated files are written on some machine; what is
committed must read the same on any other: paths relative to the repo, or
placeholders such as ``<tmp>``, ``<venv>`` and ``<site-packages>``
(:func:`bench.config.redact_paths`).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bench.config import redact_paths

REPO = Path(__file__).resolve().parents[2]

# A path starts at a word boundary, not inside a relative path or a placeholder.
_START = r"(?<![\w.<>~/-])"
MACHINE_PATH = re.compile(
    "|".join(
        (
            _START + r"/(?:work|root|Users|home/[a-z_][\w.-]*)/[\w.-]+",
            _START + r"/tmp/(?:tmp\w+|pytest-of-[\w-]+|[\w.-]+/[\w.-]+)",
            _START + r"/[\w./-]*/(?:site-packages|\.venv|venv)/[\w.-]",
        )
    )
)
"""Absolute paths of a machine: work and home roots, temporary folders, environments."""


def _tracked_files() -> list[Path]:
    if shutil.which("git") is None or not (REPO / ".git").exists():
        pytest.skip("not a git checkout")
    listed = subprocess.run(
        ["git", "-C", str(REPO), "ls-files", "-z"],
        capture_output=True,
        check=True,
        timeout=60,
    )
    return [REPO / name for name in listed.stdout.decode().split("\0") if name]


def test_no_tracked_file_names_an_absolute_machine_path() -> None:
    """Every tracked text file is free of /work, /root, /home, temp-folder and venv paths."""
    offenders: list[str] = []
    for path in _tracked_files():
        if not path.is_file():
            continue  # deleted in the working tree, not yet committed
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        for number, line in enumerate(text.splitlines(), 1):
            found = MACHINE_PATH.search(line)
            if found:
                offenders.append(f"{path.relative_to(REPO)}:{number}: {found.group(0)}")
    assert offenders == []


# Built from pieces so this file itself names no machine path.
_W, _T, _V, _S = "/" + "work", "/" + "tmp", "/" + ".venv", "site" + "-packages"


@pytest.mark.parametrize(
    "text",
    [
        f"Python 3.11.7 ({_W}/main{_V}/bin/python)",
        f"{_T}/metric-catalog-bench-0/roots/5553/import-10000/src/metric_catalog/vocabulary.py:87",
        f"{_T}/tmpab12cd/catalog/grpo.yaml",
        f"{_W}/main{_V}/lib/python3.11/{_S}/yaml/events.py:65(__init__)",
        f"/opt/x/lib/python3.12/{_S}/opentelemetry/sdk/x.py:4(f)",
        "/" + "home/alice/src/metric-catalog/codegen/catalog/loader.py:10(load)",
        "/" + "root/.pyenv/versions/3.11.7/lib/python3.11/json/encoder.py:1",
    ],
)
def test_redact_paths_leaves_no_machine_path(text: str) -> None:
    """Whatever machine wrote it, a redacted line names no absolute machine path, stably."""
    assert MACHINE_PATH.search(text), "the pattern must catch the unredacted line"
    redacted = redact_paths(text)
    assert not MACHINE_PATH.search(redacted), redacted
    assert redact_paths(redacted) == redacted


@pytest.mark.parametrize(
    ("prefix", "tail"),
    [(str(REPO) + "/", "codegen/catalog/loader.py:10(load)"), (sys.prefix, "/bin/python")],
    ids=["checkout", "environment"],
)
def test_redact_paths_removes_this_machines_checkout_and_environment(
    prefix: str, tail: str
) -> None:
    """Wherever this checkout and its environment live (any root), no trace of them stays."""
    redacted = redact_paths(prefix + tail)
    assert prefix not in redacted, redacted
    assert redacted.endswith(tail), redacted
    assert not MACHINE_PATH.search(redacted), redacted
    assert redact_paths(redacted) == redacted


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (f"{REPO}/codegen/catalog/loader.py:10(load)", "codegen/catalog/loader.py:10(load)"),
        (f"{sys.prefix}/bin/python", "<venv>/bin/python"),
        (f"{_W}/main{_V}/bin/python", "<venv>/bin/python"),
        (f"{_T}/x/y.py", "<tmp>/x/y.py"),
        (f"{_W}/main{_V}/lib/python3.11/{_S}/yaml/a.py", "<site-packages>/yaml/a.py"),
        (f".venv/lib/python3.11/{_S}/yaml/a.py", "<site-packages>/yaml/a.py"),
        ("{method 'disable' of '_lsprof.Profiler' objects}", None),
        ("codegen/tmp/x.py and bench/out/venv-glean", None),
    ],
)
def test_redact_paths_writes_relative_paths_and_placeholders(
    text: str, expected: str | None
) -> None:
    """Repo paths become relative, environments and temp folders placeholders; the rest stays."""
    assert redact_paths(text) == (text if expected is None else expected)


_SEGMENT = st.from_regex(r"[a-z][a-z0-9_.-]{0,8}", fullmatch=True)
_ROOTS = st.sampled_from(
    [
        _W,
        _T,
        "/" + "root",
        "/" + "home/alice",
        str(REPO),
        sys.prefix,
        f"/opt/py/lib/python3.11/{_S}",
    ]
)


@given(root=_ROOTS, segments=st.lists(_SEGMENT, min_size=1, max_size=5), line=st.integers(1, 999))
def test_redacted_profile_lines_name_no_machine_path(
    root: str, segments: list[str], line: int
) -> None:
    """A cProfile-like line under any machine root is redacted once and for all."""
    text = f"  12  0.001  {root}/{'/'.join(segments)}.py:{line}(f)"
    redacted = redact_paths(text)
    assert not MACHINE_PATH.search(redacted), redacted
    assert redact_paths(redacted) == redacted
    assert redacted.endswith(f"{segments[-1]}.py:{line}(f)")
