"""verl_metrics: verl's PPO/GRPO trainer metrics, declared with metric-catalog."""

__all__: list[str] = []
