"""Fixtures of the notebook tools tests: one kernel per module (the kernel suite's own
fixture) serving the tools, and the scripted MCP agent connected to it (helpers.py)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from tests.kernel.conftest import Kernel
from tests.kernel.conftest import kernel as kernel  # the module-scoped kernel fixture
from tests.tools.helpers import McpAgent, start_tools


@pytest.fixture(scope="module")
def spec(kernel: Kernel) -> dict[str, Any]:
    """The ``mcpServers`` entry of the tools server started in the module's kernel."""
    return start_tools(kernel)


@pytest.fixture(scope="module")
def agent(spec: dict[str, Any]) -> Iterator[McpAgent]:
    agent = McpAgent(spec)
    try:
        yield agent
    finally:
        agent.close()


@pytest.fixture
def policy(kernel: Kernel, request: pytest.FixtureRequest) -> Iterator[Callable[[str], None]]:
    """Set the approval answer for a test ("allow" or "deny"); back to the module's
    ``DEFAULT_ANSWER`` ("allow" unless it says otherwise) after."""

    def set_answer(answer: str) -> None:
        kernel.text(f"_tools_policy['answer'] = {answer!r}")

    yield set_answer
    set_answer(getattr(request.module, "DEFAULT_ANSWER", "allow"))
