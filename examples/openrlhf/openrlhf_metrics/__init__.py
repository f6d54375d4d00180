"""openrlhf_metrics: OpenRLHF's PPO trainer metrics, declared with metric-catalog."""

__all__: list[str] = []
