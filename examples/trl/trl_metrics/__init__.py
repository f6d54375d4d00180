"""trl_metrics: Hugging Face TRL's GRPOTrainer metrics, declared with metric-catalog."""

__all__: list[str] = []
