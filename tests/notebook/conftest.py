"""The notebook layer without a kernel: a :class:`NotebookAgents` in a scratch folder (its
agent loop thread and the agents it starts are real), and the control context that
``%acp --…`` and ``acp.…()`` build from it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from acp_notebook.notebook.controls import ControlContext
from acp_notebook.notebook.runtime.agents import NotebookAgents

#: Safety net for one wait; never an assertion of speed.
SAFETY = 60.0
AGENTS = Path(__file__).parent / "agents"


def agent_command(script: str) -> str:
    """An agent of ``tests/notebook/agents`` as the command line ``-a`` takes."""
    return f'"{sys.executable}" "{AGENTS / script}"'


@pytest.fixture
def agents(tmp_path: Path) -> Iterator[NotebookAgents]:
    notebook = NotebookAgents(cwd=str(tmp_path))
    yield notebook
    notebook.shutdown()


def context(agents: NotebookAgents, **given: Any) -> ControlContext:
    """What ``%acp -a … -s … --control`` acts on (the demo agent unless ``agent=``)."""
    return ControlContext(agents, "demo", **given)


def on_loop(agents: NotebookAgents, func: Callable[[], Any]) -> Any:
    """``func()`` on the agent loop thread, which owns sessions and widgets."""

    async def call() -> Any:
        return func()

    return agents.loop.run(call, timeout=SAFETY)


class Seen:
    """Set from any thread when something observable happened; waited for here."""

    def __init__(self) -> None:
        self.event = threading.Event()
        self.values: list[Any] = []

    def __call__(self, value: Any = None) -> None:
        self.values.append(value)
        self.event.set()

    def wait(self, what: str) -> None:
        assert self.event.wait(SAFETY), f"waited {SAFETY:.0f} s for {what}"
        self.event.clear()


def fresh_python(code: str, *args: str, tmp_path: Path) -> dict[str, Any]:
    """Run ``code`` in a fresh interpreter in ``tmp_path`` (the demo agent keeps its
    sessions there) and return the JSON object its last line printed."""
    env = {**os.environ, "ACP_DEMO_STATE_FILE": str(tmp_path / "demo.json")}
    result = subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
        cwd=tmp_path,
        env=env,
    )
    answer: dict[str, Any] = json.loads(result.stdout.strip().splitlines()[-1])
    return answer
