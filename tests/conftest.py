"""Shared fixtures. Area-specific fixtures live next to their tests.

The catalogs several areas judge against are loaded once a session: the repository's
own catalog and the evolution fixture's (``tests/fixtures/evolution``). A
:class:`~codegen.catalog.model.Catalog` is frozen, so sharing one is safe; a test
that needs a changed catalog builds its own with :func:`dataclasses.replace`.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import settings

from codegen.catalog.model import Catalog
from codegen.catalog.pipeline import load_and_check
from metric_catalog import vocabulary

# Property tests check invariants, not speed: a per-example deadline only turns a
# loaded CI machine into a flaky failure. Speed is measured in bench/.
settings.register_profile("metric-catalog", deadline=None)
settings.load_profile("metric-catalog")

REPO = Path(__file__).resolve().parents[1]
EVOLUTION = REPO / "tests" / "fixtures" / "evolution"


@pytest.fixture
def registry() -> Iterator[None]:
    """An empty, open registry for the test, and none of its rows left behind."""
    vocabulary._reset_for_tests()
    yield
    vocabulary._reset_for_tests()


def _clean_catalog(root: Path, *, lint: bool) -> Catalog:
    """The catalog of the project at ``root``; the test fails with the diagnostics unless it
    loads with no error."""
    result = load_and_check(root=root, lint=lint)
    assert result.ok, [d.format() for d in result.diagnostics]
    assert result.catalog is not None
    return result.catalog


@pytest.fixture(scope="session")
def repo_catalog() -> Catalog:
    """This repository's own catalog (``catalog/*.yaml``, its six loops), linted clean."""
    return _clean_catalog(REPO, lint=True)


@pytest.fixture(scope="session")
def evolution_catalog() -> Catalog:
    """The evolution fixture's catalog: owners grpo and sft, prefixes train, timing/train
    and validation, loaded clean (without the lint)."""
    return _clean_catalog(EVOLUTION, lint=False)


@pytest.fixture(scope="session")
def evolution_catalog_all_required(evolution_catalog: Catalog) -> Catalog:
    """:func:`evolution_catalog` with every teed row ``required``, as if each run must log
    them all."""
    return Catalog(
        tuple(
            replace(f, teed=tuple(replace(r, requirement_level="required") for r in f.teed))
            for f in evolution_catalog.files
        )
    )
