"""nemo_aligner_metrics: NeMo-Aligner's PPO metrics, declared with metric-catalog."""

__all__: list[str] = []
