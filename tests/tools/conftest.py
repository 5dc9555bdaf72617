"""Fixtures of the notebook tools tests: one kernel per module serving the tools, and
the scripted MCP agent connected to it (see helpers.py)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from tests.kernel.conftest import Kernel, _start
from tests.tools.helpers import McpAgent, start_tools


@pytest.fixture(scope="module")
def kernel(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Kernel]:
    """A kernel of this module, serving the notebook tools (``spec`` on ``kernel.spec``)."""
    kernel = _start(tmp_path_factory.mktemp("tools"))
    try:
        yield kernel
    finally:
        kernel.shutdown()


@pytest.fixture(scope="module")
def spec(kernel: Kernel) -> dict[str, Any]:
    return start_tools(kernel)


@pytest.fixture(scope="module")
def agent(spec: dict[str, Any]) -> Iterator[McpAgent]:
    agent = McpAgent(spec)
    try:
        yield agent
    finally:
        agent.close()


@pytest.fixture
def policy(kernel: Kernel) -> Iterator[Callable[[str], None]]:
    """Set the approval answer for a test ("allow" or "deny"); back to "allow" after."""

    def set_answer(answer: str) -> None:
        kernel.text(f"_tools_policy['answer'] = {answer!r}")

    yield set_answer
    set_answer("allow")
