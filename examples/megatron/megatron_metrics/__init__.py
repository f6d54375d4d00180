"""megatron_metrics: Megatron-LM's training metrics, declared with metric-catalog."""

__all__: list[str] = []
