"""Reading runs: records, limits, key rewriting and every input format.

Shared by live-check and infer; it imports neither them nor the catalog, so a
reader knows nothing of what the keys mean.
"""

__all__: list[str] = []
