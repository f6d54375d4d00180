"""myrl: an example RL codebase that declares its metrics with metric-catalog."""

__all__: list[str] = []
