"""Code generation for metric-catalog: load -> validate -> lint -> render.

Run it as ``python -m codegen <command>``; ``python -m codegen --help`` lists
the commands. Nothing under ``src/metric_catalog`` imports this package.
"""

__all__: list[str] = []
