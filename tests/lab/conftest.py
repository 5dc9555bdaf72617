"""The lab runs on asyncio (a notebook's loop): its tests use anyio's asyncio backend."""

from __future__ import annotations

import pytest


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
