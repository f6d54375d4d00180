"""One module per ``python -m codegen`` command; see :mod:`codegen.cli`."""
