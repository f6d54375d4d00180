"""The benchmarks' synthetic catalog loads clean, and its glean twin has the same rows."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml

from bench.synthetic import (
    GLEAN_METRICS_SCHEMA,
    GLEAN_PINGS_SCHEMA,
    synthesize,
    write_catalog,
    write_glean_catalog,
)
from codegen.catalog.pipeline import load_and_check

ROWS = 600
FILES = 4

_GLEAN_REQUIRED = {"type", "description", "bugs", "data_reviews", "notification_emails", "expires"}


def test_synthetic_catalog_loads_validates_and_lints_clean(tmp_path: Path) -> None:
    files = synthesize(ROWS, FILES)
    write_catalog(tmp_path, files)

    result = load_and_check(root=tmp_path, lint=True)

    assert result.diagnostics == ()
    assert result.ok
    rows = [row for _, row in result.catalog.rows()]
    assert len(rows) == ROWS
    assert len(result.catalog.files) == FILES
    kinds = Counter(row.kind for row in rows)
    assert set(kinds) == {"gauge", "counter", "histogram", "up_down_counter"}
    sections = Counter(row.section for row in rows)
    assert sections["teed"] > sections["recorded"] > 0
    assert len({row.unit for row in rows}) >= 5
    assert len({row.stability for row in rows}) == 4
    assert len({row.prefix for row in rows if row.section == "teed"}) >= 3


def test_synthesize_is_deterministic_and_spreads_rows_evenly() -> None:
    first = synthesize(1001, 5)
    assert first == synthesize(1001, 5)
    assert sorted(len(f.rows) for f in first) == [200, 200, 200, 200, 201]
    assert len(synthesize(10_000)) == 50


@pytest.mark.parametrize(("rows", "files"), [(0, None), (10, 0), (10, 11)])
def test_synthesize_rejects_impossible_sizes(rows: int, files: int | None) -> None:
    with pytest.raises(ValueError, match="must be"):
        synthesize(rows, files)


def test_glean_conversion_has_the_same_metrics(tmp_path: Path) -> None:
    files = synthesize(ROWS, FILES)
    paths = write_glean_catalog(tmp_path, files)

    metrics: dict[str, dict[str, Any]] = {}
    pings: dict[str, object] = {}
    for path in paths:
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
        schema = doc.pop("$schema")
        if path.name == "pings.yaml":
            assert schema == GLEAN_PINGS_SCHEMA
            pings.update(doc)
            continue
        assert schema == GLEAN_METRICS_SCHEMA
        for category, entries in doc.items():
            for name, fields in entries.items():
                metrics[f"{category}.{name}"] = fields

    assert len(metrics) == ROWS == sum(len(f.rows) for f in files)
    for fields in metrics.values():
        assert set(fields) >= _GLEAN_REQUIRED
        assert set(fields["send_in_pings"]) <= set(pings)
        if fields["type"] == "quantity":
            assert fields["unit"]
    types = Counter(str(fields["type"]) for fields in metrics.values())
    assert {"counter", "quantity", "timing_distribution"} <= set(types)
    rows = [row for f in files for row in f.rows]
    assert types["counter"] == sum(row.kind == "counter" for row in rows)
    assert types["timing_distribution"] == sum(
        row.kind == "histogram" and row.unit == "s" for row in rows
    )
