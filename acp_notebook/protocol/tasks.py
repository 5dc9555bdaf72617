"""A task-group helper that keeps errors readable."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

import anyio
import anyio.abc


@contextlib.asynccontextmanager
async def background_tasks() -> AsyncIterator[anyio.abc.TaskGroup]:
    """A task group for helper tasks that live as long as the ``async with`` body.

    When the body ends the helpers are cancelled, and an exception from the body
    comes out as itself instead of wrapped in an ``ExceptionGroup`` (anyio wraps
    every error that crosses a task group), so callers can ``except RpcError``.
    """
    error: Exception | None = None
    async with anyio.create_task_group() as task_group:
        try:
            yield task_group
        except Exception as exc:
            error = exc
        finally:
            task_group.cancel_scope.cancel()
    if error is not None:
        raise error
