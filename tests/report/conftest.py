"""Fixtures for the report tests (built in report_fixtures.py)."""

from __future__ import annotations

import pytest
from report_fixtures import build_result

from fairtalk.results import AuditResult


@pytest.fixture
def result() -> AuditResult:
    """The Table-4-shaped result with hostile text."""
    return build_result()
