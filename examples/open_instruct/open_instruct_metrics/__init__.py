"""open_instruct_metrics: open-instruct's GRPO trainer metrics, declared with metric-catalog."""

__all__: list[str] = []
