"""Shared fixtures. Area-specific fixtures live next to their tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hypothesis import settings

from metric_catalog import vocabulary

# Property tests check invariants, not speed: a per-example deadline only turns a
# loaded CI machine into a flaky failure. Speed is measured in bench/.
settings.register_profile("metric-catalog", deadline=None)
settings.load_profile("metric-catalog")


@pytest.fixture
def registry() -> Iterator[None]:
    """An empty, open registry for the test, and none of its rows left behind."""
    vocabulary._reset_for_tests()
    yield
    vocabulary._reset_for_tests()
