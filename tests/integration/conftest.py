"""The loopback model, one per test session (each pytest-xdist worker has its own)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from .loopback import LoopbackModel, serve


@pytest.fixture(scope="session")
def model() -> Iterator[LoopbackModel]:
    yield from serve()
