"""open-instruct's telemetry: the metric catalog (``catalog/``) and its generated modules."""

__all__: list[str] = []
