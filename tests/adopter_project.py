"""A small adopter project (laid out like examples/adopter) that tests write into a folder."""

from __future__ import annotations

from pathlib import Path

# One PPO row, as the adopter keeps it in myrl/telemetry/catalog/ppo.yaml.
ROW = """\
owner: myrl.algorithms.ppo
module: ppo
description: Metrics logged by the PPO loop.
prefix: train
teed:
  - logger_key: value_loss
    name: rl.value.loss
    kind: gauge
    unit: "1"
    description: Value-function loss over the batch.
"""

ADOPTER_TABLE = """\
[project]
name = "myrl"

[tool.metric-catalog]
catalog = ["myrl/telemetry/catalog/*.yaml"]
package = "myrl.telemetry.generated"
package-dir = "myrl/telemetry/generated"
docs-dir = "docs/metrics"
dashboards-dir = "docs/dashboards"
"""


def adopter(root: Path, table: str = ADOPTER_TABLE, row: str = ROW) -> Path:
    """A project laid out like examples/adopter: its catalog deep inside its package."""
    (root / "pyproject.toml").write_text(table, encoding="utf-8")
    catalog = root / "myrl" / "telemetry" / "catalog"
    catalog.mkdir(parents=True)
    (catalog / "ppo.yaml").write_text(row, encoding="utf-8")
    return root
