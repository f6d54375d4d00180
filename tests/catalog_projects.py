"""A catalog given as YAML text, written into a project folder and loaded, as tests need it."""

from __future__ import annotations

from pathlib import Path

from codegen.catalog.model import Catalog
from codegen.catalog.pipeline import load_and_check

__all__ = ["POLICY_LOSS_FAMILY", "loaded_catalog", "write_catalog"]


def write_catalog(root: Path, text: str, name: str = "catalog.yaml") -> Path:
    """``root`` as a project whose ``catalog/<name>`` holds ``text``; returns ``root``."""
    (root / "catalog").mkdir(parents=True, exist_ok=True)
    (root / "catalog" / name).write_text(text, encoding="utf-8")
    return root


def loaded_catalog(root: Path, text: str | None = None, name: str = "catalog.yaml") -> Catalog:
    """The valid catalog of the project at ``root`` (``text`` written in first, if given),
    loaded without the lint; the test fails with the diagnostics when it is not valid."""
    if text is not None:
        write_catalog(root, text, name)
    result = load_and_check(root=root, lint=False)
    assert result.ok, [d.format() for d in result.diagnostics]
    assert result.catalog is not None
    return result.catalog


POLICY_LOSS_FAMILY = """\
owner: policy
module: policy
description: Policy losses under an open family.
prefix: ""
attributes:
  - name: rl.loss_name
    type: string
    description: Which loss term.
    max_cardinality: "64"
teed:
  - logger_key: "policy/{rl.loss_name}"
    name: rl.policy.loss_term
    kind: gauge
    unit: ""
    description: One term of the policy loss.
    attributes:
      - ref: rl.loss_name
"""
"""One row under an open family (``policy/{rl.loss_name}``), shared by live-check tests."""
