"""``python -m codegen``: the command-line entry point."""

import sys

from codegen.cli import main

sys.exit(main())
