"""live-check's options are one frozen ``CheckOptions``, built once and passed whole.

The documented keyword arguments of the entry points still work and mean the
same dataclass; giving both is refused rather than one silently winning.
"""

from __future__ import annotations

import dataclasses
import io
from pathlib import Path

import pytest

from codegen.catalog.model import Catalog
from codegen.live_check import (
    CheckOptions,
    LiveCheckReport,
    check_file,
    check_paths,
    check_records,
    check_stream,
)
from codegen.live_check.options import resolve_options
from codegen.runs.ingest import read_source
from codegen.runs.limits import Limits
from codegen.runs.records import Source
from tests.catalog_projects import loaded_catalog, write_catalog

CATALOG = """\
owner: acc
module: acc
description: Accuracy and loss.
prefix: ""
teed:
  - logger_key: "acc/mean@4"
    name: rl.acc.mean_at_4
    kind: gauge
    unit: "1"
    description: Mean accuracy over four samples.
  - logger_key: loss
    name: rl.loss
    kind: gauge
    unit: "1"
    description: The training loss.
    requirement_level: required
"""

RUN = b'{"step": 1, "data": {"train/acc/mean_at_4": 0.5, "other": 1.0}}\n'

OPTIONS = CheckOptions(
    input_format="flat-jsonl",
    key_rewrites=(("_at_", "@"),),
    key_prefix_rewrites=(("train/", ""),),
    all_owners=True,
)


@pytest.fixture
def accuracy_catalog(tmp_path: Path) -> Catalog:
    """The accuracy and loss rows of :data:`CATALOG`."""
    write_catalog(tmp_path, CATALOG, "acc.yaml")
    return loaded_catalog(tmp_path)


def _findings(report: LiveCheckReport) -> set[tuple[str, str]]:
    return {(f.kind, f.qualified_key) for f in report.findings}


def test_options_are_frozen() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        OPTIONS.loop = "x"  # type: ignore[misc]


def test_the_keywords_build_the_same_options_once() -> None:
    keywords = {f.name: getattr(OPTIONS, f.name) for f in dataclasses.fields(CheckOptions)}
    assert resolve_options(None, keywords) == OPTIONS  # type: ignore[arg-type]
    assert resolve_options(OPTIONS, {}) is OPTIONS
    assert resolve_options(None, {}) == CheckOptions()


def test_options_and_keywords_together_are_refused(accuracy_catalog: Catalog) -> None:
    with pytest.raises(TypeError, match=r"not both.*loop|loop.*not both"):
        check_stream(io.BytesIO(RUN), accuracy_catalog, OPTIONS, loop="x")


@pytest.mark.parametrize("entry", ["stream", "file", "paths"])
def test_each_entry_point_judges_the_same_with_options_or_keywords(
    accuracy_catalog: Catalog, tmp_path: Path, entry: str
) -> None:
    path = tmp_path / "run.jsonl"
    path.write_bytes(RUN)
    keywords = {f.name: getattr(OPTIONS, f.name) for f in dataclasses.fields(CheckOptions)}

    def run(*args: object, **kwargs: object) -> LiveCheckReport:
        if entry == "stream":
            return check_stream(
                io.BytesIO(RUN), accuracy_catalog, *args, source=str(path), **kwargs
            )  # type: ignore[arg-type]
        if entry == "file":
            return check_file(str(path), accuracy_catalog, *args, **kwargs)  # type: ignore[arg-type]
        return check_paths([str(path)], accuracy_catalog, *args, **kwargs)  # type: ignore[arg-type]

    with_options, with_keywords = run(OPTIONS), run(**keywords)
    assert _findings(with_options) == _findings(with_keywords)
    # The rewrites of the options were applied: the mangled, prefixed key matched its row.
    assert ("undeclared", "train/acc/mean_at_4") not in _findings(with_options)
    assert ("undeclared", "other") in _findings(with_options)
    assert with_options.key_rewrites == with_keywords.key_rewrites == (("_at_", "@"),)


def test_check_records_takes_the_options_whole(accuracy_catalog: Catalog) -> None:
    records = list(read_source(Source("run", io.BytesIO(RUN)), Limits(), "flat-jsonl"))
    options = CheckOptions(key_rewrites=(("_at_", "@"),))
    report = check_records(records, accuracy_catalog, options)
    assert report.key_rewrites == (("_at_", "@"),)
    assert _findings(report) == _findings(
        check_records(records, accuracy_catalog, key_rewrites=(("_at_", "@"),))
    )
