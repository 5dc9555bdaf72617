"""Fixtures shared by the client tests."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any

import anyio
import pytest

from acp_notebook.client import Session, connect
from acp_notebook.protocol.jsonrpc import Observer

from .helpers import SAFETY

#: ``open_session(command, **options)``: see the fixture.
OpenSession = Callable[..., AbstractAsyncContextManager[Session]]


@pytest.fixture
def anyio_backend() -> str:
    """Run ``@pytest.mark.anyio`` tests on asyncio, the loop the Jupyter kernel uses."""
    return "asyncio"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """An empty directory to confine files and terminals to (``tmp_path`` holds others)."""
    path = tmp_path / "root"
    path.mkdir()
    return path


@pytest.fixture
def open_session(tmp_path: Path) -> OpenSession:
    """``async with open_session(DEMO, policy="allow") as session``: the agent started and
    initialized, and one `session/new` in ``tmp_path`` (or ``cwd=``); the whole block runs
    under the SAFETY net. ``observers`` and ``cancel_grace`` go to :func:`connect`, every
    other option to ``new_session``; the connection is ``session.connection``."""

    @contextlib.asynccontextmanager
    async def opened(
        command: Sequence[str],
        *,
        cwd: Path | None = None,
        observers: Sequence[Observer] = (),
        cancel_grace: float | None = None,
        **options: Any,
    ) -> AsyncIterator[Session]:
        grace = {} if cancel_grace is None else {"cancel_grace": cancel_grace}
        with anyio.fail_after(SAFETY):
            async with connect(command, observers=observers, **grace) as conn:
                yield await conn.new_session(cwd or tmp_path, **options)

    return opened
