"""titan_metrics: torchtitan's training metrics, declared with metric-catalog."""

__all__: list[str] = []
