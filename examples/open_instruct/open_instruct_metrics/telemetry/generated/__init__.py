"""Generated metric modules, one per catalog file (metric-catalog generate).

Import the module of the code that logs the keys; this package imports none of
them, so an owner that never runs declares nothing.
"""

__all__: list[str] = []
