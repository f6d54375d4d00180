"""Measuring helpers: a child process's wall time and peak RSS, medians, ratios.

Peak RSS comes from ``os.wait4`` on the child itself, so each sample is that one
process's high-water mark (``getrusage(RUSAGE_CHILDREN)`` would report the
largest child seen so far instead), and the child is forked from a small shim
rather than from this interpreter (see ``_SHIM``).
"""

from __future__ import annotations

import contextlib
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

__all__ = [
    "REPO",
    "BenchError",
    "Sample",
    "child_env",
    "fmt_ms",
    "fmt_ratio",
    "fmt_us",
    "median",
    "python",
    "run_checked",
    "run_child",
]

REPO: Final = Path(__file__).resolve().parent.parent
"""The checkout the benchmarks run against (``codegen`` is imported from here)."""

_STDERR_TAIL: Final = 4000


class BenchError(RuntimeError):
    """A benchmark could not run (a command failed, an assertion did not hold)."""


@dataclass(frozen=True, slots=True)
class Sample:
    """One run of a child process."""

    wall_s: float
    max_rss_mib: float
    returncode: int
    stdout: str
    stderr: str
    cpu_s: float = float("nan")
    """User plus system CPU time of the command; steadier than wall on a busy machine."""


def child_env(
    extra: Mapping[str, str] | None = None, pythonpath: Sequence[Path] = ()
) -> dict[str, str]:
    """The environment for a benchmarked child: ours, minus knobs that skew timings.

    ``PYTHONPATH`` is set to ``pythonpath`` then the repo root, so ``codegen``
    imports from this checkout whatever the working directory.
    """
    env = dict(os.environ)
    for knob in ("PYTHONDONTWRITEBYTECODE", "PYTHONPROFILEIMPORTTIME", "PYTHONTRACEMALLOC"):
        env.pop(knob, None)
    env["PYTHONPATH"] = os.pathsep.join([*(str(p) for p in pythonpath), str(REPO)])
    env["PYTHONHASHSEED"] = "0"
    if extra:
        env.update(extra)
    return env


# Peak RSS needs care: a child forked (or vforked) from this interpreter inherits
# its RSS high-water mark across exec, so every child would report at least our
# own size. This shim (a fresh interpreter, run with -I -S so it stays small)
# forks the command itself and reports the command's own wall time and peak RSS,
# measured around its fork/wait, so the shim's start-up is not in the timing.
_SHIM: Final = """
import os, sys, time
out, argv = sys.argv[1], sys.argv[2:]
start = time.perf_counter()
pid = os.fork()
if pid == 0:
    try:
        os.execvp(argv[0], argv)
    finally:
        os._exit(127)
_, status, usage = os.wait4(pid, 0)
wall = time.perf_counter() - start
with open(out, "w") as f:
    f.write(f"{wall!r} {usage.ru_maxrss} {usage.ru_utime + usage.ru_stime!r}")
sys.exit(os.waitstatus_to_exitcode(status) % 256)
"""


def run_child(
    argv: Sequence[str | Path],
    *,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    timeout_s: float = 900.0,
) -> Sample:
    """Run ``argv`` to completion; return its wall time, peak RSS, exit code and output."""
    with (
        tempfile.TemporaryFile() as out,
        tempfile.TemporaryFile() as err,
        tempfile.TemporaryDirectory() as tmp,
    ):
        report = Path(tmp) / "rusage"
        proc = subprocess.Popen(
            [sys.executable, "-I", "-S", "-c", _SHIM, str(report), *(str(a) for a in argv)],
            cwd=cwd,
            env=dict(env) if env is not None else None,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=err,
            start_new_session=True,
        )

        def kill() -> None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)

        timer = threading.Timer(timeout_s, kill)
        timer.start()
        try:
            returncode = proc.wait()
        finally:
            timer.cancel()
        out.seek(0)
        err.seek(0)
        stdout = out.read().decode("utf-8", "replace")
        stderr = err.read().decode("utf-8", "replace")
        try:
            wall_text, rss_text, cpu_text = report.read_text().split()
            wall, rss_kib, cpu = float(wall_text), int(rss_text), float(cpu_text)
        except (OSError, ValueError):
            wall, rss_kib, cpu = float("nan"), 0, float("nan")
            returncode = returncode or 255
            stderr += f"\n(bench: no rusage report; killed after {timeout_s:g} s?)"
    # Linux reports ru_maxrss in KiB.
    return Sample(wall, rss_kib / 1024, returncode, stdout, stderr, cpu)


def run_checked(
    argv: Sequence[str | Path],
    *,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    ok: Callable[[Sample], bool] = lambda s: s.returncode == 0,
    timeout_s: float = 900.0,
) -> Sample:
    """:func:`run_child`, raising :class:`BenchError` with the output tail when ``ok`` fails."""
    sample = run_child(argv, cwd=cwd, env=env, timeout_s=timeout_s)
    if not ok(sample):
        shown = " ".join(str(a) for a in argv)
        if len(shown) > 300:
            shown = shown[:300] + " ..."
        msg = (
            f"command failed (exit {sample.returncode}): {shown}\n"
            f"--- stdout (tail) ---\n{sample.stdout[-_STDERR_TAIL:]}\n"
            f"--- stderr (tail) ---\n{sample.stderr[-_STDERR_TAIL:]}"
        )
        raise BenchError(msg)
    return sample


def median(values: Sequence[float]) -> float:
    """Median of a non-empty sequence."""
    return statistics.median(values)


def fmt_ms(seconds: float) -> str:
    """Seconds as milliseconds, three significant-ish digits."""
    ms = seconds * 1000
    return f"{ms:.0f} ms" if ms >= 100 else f"{ms:.1f} ms"


def fmt_us(seconds: float) -> str:
    """Seconds as microseconds."""
    us = seconds * 1e6
    return f"{us:.0f} µs" if us >= 100 else f"{us:.2f} µs"


def fmt_ratio(value: float) -> str:
    """A ratio such as ``0.042x`` or ``12.3x``."""
    if value >= 10:
        return f"{value:.1f}x"
    if value >= 0.1:
        return f"{value:.2f}x"
    return f"{value:.3f}x"


def python() -> str:
    """The interpreter running the benchmarks (the project's ``.venv``)."""
    return sys.executable
