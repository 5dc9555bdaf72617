"""Fixtures shared by the client tests."""

from __future__ import annotations

import pytest


@pytest.fixture
def anyio_backend() -> str:
    """Run ``@pytest.mark.anyio`` tests on asyncio, the loop the Jupyter kernel uses."""
    return "asyncio"
