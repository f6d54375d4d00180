"""metric-catalog: a declarative catalog of the metrics an RL training stack emits.

The runtime core is :mod:`metric_catalog.vocabulary` (standard library only).
Generated owner modules live in :mod:`metric_catalog.generated`; the
OpenTelemetry tee lives in modules that import the SDK lazily.
"""

__all__: list[str] = []
