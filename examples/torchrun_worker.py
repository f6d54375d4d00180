"""A torchrun worker: one process per rank, the launcher sets its identity.

``torchrun --nproc-per-node 4 -m examples.torchrun_worker --steps 3`` starts
four of these; torchrun sets ``RANK``, ``LOCAL_RANK`` and ``WORLD_SIZE``, so
with ``OTEL_METRICS_EXPORTER=prometheus`` each rank serves on
``9464 + LOCAL_RANK`` and, with ``METRIC_CATALOG_PROMOTE=rank``, every series
carries its rank. Plain processes started without a launcher work too: each
takes the next free port of the range.

Each worker logs :data:`examples.ray_workers.WORKER_ROWS` for ``--steps``
steps, prints one JSON line (``rank``, ``pid``, ``endpoint``, ``values``),
then with ``--serve`` keeps its endpoint up until its standard input closes
(at most ``--serve`` seconds) so Prometheus can scrape it.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
from collections.abc import Sequence

from examples.ray_workers import TrainingWorker

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    """Run the worker; 0 on success."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--jsonl-dir", help="write run-{worker}.jsonl there")
    parser.add_argument(
        "--value-offset", type=int, default=0, help="shift the values (plain processes)"
    )
    parser.add_argument(
        "--serve", type=float, default=0.0, help="keep serving until stdin closes, at most S s"
    )
    args = parser.parse_args(argv)
    worker = TrainingWorker(
        None, None, None, jsonl_dir=args.jsonl_dir, value_offset=args.value_offset
    )
    values: dict[str, float] = {}
    for step in range(args.steps):
        values = worker.step(step)
    line = {
        "rank": worker.rank,
        "pid": os.getpid(),
        "endpoint": worker.endpoint(),
        "values": values,
    }
    print(json.dumps(line), flush=True)
    if args.serve > 0:
        closed = threading.Event()

        def wait_for_eof() -> None:
            sys.stdin.read()
            closed.set()

        threading.Thread(target=wait_for_eof, daemon=True).start()
        closed.wait(args.serve)
    worker.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
