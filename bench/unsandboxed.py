"""``python -m bench.unsandboxed ARGS``: ``python -m codegen ARGS`` on plain, unsandboxed Jinja.

The baseline of benchmark 9 (:mod:`bench.sandbox_bench`) and nothing else: it
swaps the environment class of :mod:`codegen.generate.templating` for
:class:`jinja2.Environment` in this process only, so the cost of the sandbox can
be measured against the same code. The product has no such switch.
"""

from __future__ import annotations

import sys

import jinja2

from codegen.cli import main
from codegen.generate import templating

__all__: list[str] = []

if __name__ == "__main__":
    vars(templating)["_Sandbox"] = jinja2.Environment
    sys.exit(main(sys.argv[1:]))
