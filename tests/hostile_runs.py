"""Run the CLI (or a snippet) on hostile input in a child, bounded: a deadline, a memory
bound measured as the child's own peak RSS, and no traceback on stderr.

The peak is the child's own: ``ru_maxrss`` of a child forked from the test runner keeps
the runner's high-water mark, so the child resets its VmHWM (``/proc/self/clear_refs``)
before it starts, and reports it when it ends.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

__all__ = ["REPO", "Bounded", "run_cli", "run_snippet"]

REPO = Path(__file__).resolve().parent.parent

_WRAPPER = textwrap.dedent(
    """
    import os, runpy, sys
    from pathlib import Path
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        pass
    out = os.environ.pop("HOSTILE_PEAK_FILE")
    code = 0
    try:
        if sys.argv[1] == "-c":
            sys.argv = ["-c", *sys.argv[3:]]
            snippet = os.environ.pop("HOSTILE_SNIPPET")
            exec(compile(snippet, "<snippet>", "exec"), {"__name__": "__main__"})
        else:
            sys.argv = ["metric-catalog", *sys.argv[1:]]
            runpy.run_module("codegen", run_name="__main__")
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    finally:
        try:
            status = Path("/proc/self/status").read_text().splitlines()
            peak = next(line.split()[1] for line in status if line.startswith("VmHWM:"))
        except (OSError, StopIteration):
            import resource
            peak = str(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
        Path(out).write_text(peak)
    sys.stdout.flush()
    os._exit(code)
    """
)


@dataclass(frozen=True, slots=True)
class Bounded:
    """What a bounded child did: exit code, output, and its peak RSS in MiB."""

    code: int
    stdout: str
    stderr: str
    peak_mib: float


def _run(args: list[str], env_extra: dict[str, str], tmp: Path, deadline: float) -> Bounded:
    peak_file = tmp / f".peak-{os.getpid()}-{len(list(tmp.glob('.peak-*')))}"
    env = {
        **os.environ,
        "PYTHONPATH": f"{REPO / 'src'}{os.pathsep}{REPO}",
        "HOSTILE_PEAK_FILE": str(peak_file),
        **env_extra,
    }
    result = subprocess.run(
        [sys.executable, "-c", _WRAPPER, *args],
        capture_output=True,
        text=True,
        cwd=REPO,
        env=env,
        timeout=deadline,
        check=False,
        stdin=subprocess.DEVNULL,
    )
    peak = int(peak_file.read_text()) / 1024 if peak_file.exists() else float("nan")
    assert "Traceback" not in result.stderr, result.stderr[-3000:]
    return Bounded(result.returncode, result.stdout, result.stderr, peak)


def run_cli(*args: str, tmp: Path, deadline: float = 60.0) -> Bounded:
    """``metric-catalog ARGS`` in a child, killed past ``deadline`` s; no traceback allowed."""
    return _run(list(args), {}, tmp, deadline)


def run_snippet(code: str, *args: str, tmp: Path, deadline: float = 60.0) -> Bounded:
    """Python ``code`` (``sys.argv[1:]``: ``args``) in a child, bounded like :func:`run_cli`."""
    return _run(["-c", "snippet", *args], {"HOSTILE_SNIPPET": textwrap.dedent(code)}, tmp, deadline)
