"""``scan`` on a hostile tree: FIFOs, devices, links out, huge files, escape sequences.

What an attacker controls in a tree handed to ``scan``: every entry's kind (a FIFO or a
link to ``/dev/zero`` named ``*.py``), where links lead (out of the tree), each file's
size and line count, and every file name (an ANSI escape, a carriage return). ``scan``
reads regular files inside the tree only, within its size and line caps, and prints
names escaped, and every expression in it: a key of 2,000 concatenated literals is
followed without recursion. Each run is a child bounded by a deadline and 300 MiB of peak
RSS.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from codegen.scan.scanner import MAX_FILE_LINES
from tests.hostile_runs import REPO, run_cli

EVOLUTION = REPO / "tests" / "fixtures" / "evolution"
MEMORY_MIB = 300
CALL = 'logger.log_metrics({"undeclared_key_x": 1.0}, step=1, prefix="train")\n'


def fifo(src: Path, outside: Path) -> None:
    os.mkfifo(src / "metrics.py")


def dev_zero(src: Path, outside: Path) -> None:
    (src / "zero.py").symlink_to("/dev/zero")


def many_lines(src: Path, outside: Path) -> None:
    (src / "big.py").write_text("x = 1\n" * (MAX_FILE_LINES + 1) + CALL)


def link_out_of_tree(src: Path, outside: Path) -> None:
    (outside / "secret.py").write_text(CALL)
    (src / "linked").symlink_to(outside)


@pytest.mark.parametrize(
    ("make", "warning"),
    [
        (fifo, "metrics.py: warning[SCAN_UNREADABLE]: cannot read: is a FIFO"),
        (dev_zero, "zero.py: warning[SCAN_UNREADABLE]: cannot read: resolves to /dev/zero"),
        (many_lines, f"over the {MAX_FILE_LINES}-line limit of a source file"),
        (link_out_of_tree, None),
    ],
    ids=["fifo", "dev-zero-link", "600k-lines", "folder-link-out-of-tree"],
)
def test_a_hostile_entry_is_skipped_with_a_warning_and_nothing_else_is_read(
    tmp_path: Path, make: object, warning: str | None
) -> None:
    src, outside = tmp_path / "src", tmp_path / "outside"
    src.mkdir()
    outside.mkdir()
    make(src, outside)  # type: ignore[operator]

    done = run_cli(
        "scan", "--no-cache", "--root", str(EVOLUTION), str(src), tmp=tmp_path, deadline=60
    )

    assert "undeclared_key_x" not in done.stdout  # nothing outside or past a cap was read
    if warning is not None:
        assert warning in done.stdout
    assert "0 file(s)" in done.stderr
    assert done.peak_mib < MEMORY_MIB


def test_a_file_name_with_an_escape_and_a_carriage_return_is_printed_escaped(
    tmp_path: Path,
) -> None:
    src = tmp_path / "src"
    src.mkdir()
    (src / "evil\x1b[2J\x1b[31mRED\rfake.py").write_text(CALL)

    done = run_cli(
        "scan", "--no-cache", "--root", str(EVOLUTION), str(src), tmp=tmp_path, deadline=60
    )

    assert "\x1b" not in done.stdout + done.stderr
    assert "\r" not in done.stdout + done.stderr
    assert "evil\\x1b[2J\\x1b[31mRED\\rfake.py" in done.stdout


@pytest.mark.parametrize("terms", [2, 2_000])
def test_a_key_of_thousands_of_concatenated_literals_is_read_whole(
    tmp_path: Path, terms: int
) -> None:
    src = tmp_path / "src"
    src.mkdir()
    key = " + ".join(['"k"'] * terms)
    (src / "train.py").write_text(f'logger.log_metrics({{{key}: 1.0}}, step=1, prefix="train")\n')

    done = run_cli(
        "scan", "--no-cache", "--root", str(EVOLUTION), str(src), tmp=tmp_path, deadline=60
    )

    assert "1 file(s), 1 logging call(s), 1 key(s)" in done.stderr
    assert "k" * min(terms, 40) in done.stdout  # the undeclared key, named (cut if long)
    assert done.peak_mib < MEMORY_MIB


def test_a_chain_too_deep_for_pythons_parser_is_a_positioned_error_and_the_rest_is_scanned(
    tmp_path: Path,
) -> None:
    src = tmp_path / "src"
    src.mkdir()
    key = " + ".join(['"k"'] * 100_000)
    (src / "deep.py").write_text(f'logger.log_metrics({{{key}: 1.0}}, step=1, prefix="train")\n')
    (src / "other.py").write_text(CALL)

    done = run_cli(
        "scan", "--no-cache", "--root", str(EVOLUTION), str(src), tmp=tmp_path, deadline=60
    )

    assert "deep.py:1:1: error[SCAN_SYNTAX]: does not parse as Python" in done.stdout
    assert "undeclared_key_x" in done.stdout  # the other file was scanned
    assert done.peak_mib < MEMORY_MIB
