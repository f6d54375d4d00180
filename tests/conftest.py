"""Shared fixtures. Area-specific fixtures live next to their tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from metric_catalog import vocabulary


@pytest.fixture
def registry() -> Iterator[None]:
    """An empty, open registry for the test, and none of its rows left behind."""
    vocabulary._reset_for_tests()
    yield
    vocabulary._reset_for_tests()
