"""A real kernel serving the notebook tools, and a scripted agent speaking MCP to them.

The agent side is the official ``mcp`` client (``stdio_client`` + ``ClientSession``)
starting the relay exactly as an ACP agent would, from the ``mcpServers`` entry the
kernel gave; it runs on a thread of its own so a test drives the kernel and the agent
side by side. The kernel side is set up by a cell, with an approval callback whose
answer the test sets (``allow``/``deny``) and a ``show`` hook that records results.
"""

from __future__ import annotations

import concurrent.futures
import json
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import mcp_types
from mcp.client.session import ClientSession, IncomingMessage
from mcp.client.stdio import StdioServerParameters, stdio_client

from acp_notebook.notebook.runtime.loop import AgentLoop
from tests.kernel.conftest import ROOT, SAFETY, Kernel

#: The cell that starts the tools server (names start with "_": not user variables).
SETUP = """
import json
from acp_notebook.notebook.runtime.loop import AgentLoop as _AgentLoop
from acp_notebook.notebook.tools import (
    Approved as _Approved,
    Denied as _Denied,
    MainThreadRunner as _MainThreadRunner,
    NotebookToolsServer as _NotebookToolsServer,
)
_tools_loop = _AgentLoop("tools-test")
_tools_runner = _MainThreadRunner()
_tools_policy = {"answer": "allow"}
_tools_asked = []
_tools_shown = []

async def _tools_approve(request):
    _tools_asked.append(request)
    if _tools_policy["answer"] == "allow":
        return _Approved()
    return _Denied("denied by the test's policy")

_tools_server = _NotebookToolsServer(
    _tools_loop, _tools_runner, get_ipython(), "s1", _tools_approve, _tools_shown.append
)
print(json.dumps(_tools_server.start()))
"""


class McpAgent:
    """The official MCP client, connected through the relay, on its own loop thread."""

    def __init__(self, spec: dict[str, Any]) -> None:
        self.spec = spec
        self.loop = AgentLoop("mcp-test-agent")
        self.notifications: list[IncomingMessage] = []
        self._session: ClientSession | None = None
        self._stop: anyio.Event | None = None
        ready: concurrent.futures.Future[None] = concurrent.futures.Future()
        self._task = self.loop.submit(self._run, ready)
        ready.result(SAFETY)

    async def _on_message(self, message: IncomingMessage) -> None:
        self.notifications.append(message)

    async def _run(self, ready: concurrent.futures.Future[None]) -> None:
        params = StdioServerParameters(
            command=self.spec["command"],
            args=self.spec["args"],
            env={"PYTHONPATH": str(ROOT)},
        )
        try:
            async with (
                stdio_client(params) as (read, write),
                ClientSession(read, write, message_handler=self._on_message) as session,
            ):
                await session.initialize()
                self._session = session
                self._stop = anyio.Event()
                ready.set_result(None)
                await self._stop.wait()
        except BaseException as exc:
            if not ready.done():
                ready.set_exception(exc)
            raise

    @property
    def session(self) -> ClientSession:
        assert self._session is not None
        return self._session

    def call_async(
        self, name: str, arguments: dict[str, Any] | None = None
    ) -> concurrent.futures.Future[mcp_types.CallToolResult]:
        return self.loop.submit(self.session.call_tool, name, arguments or {})

    def call(self, name: str, arguments: dict[str, Any] | None = None) -> mcp_types.CallToolResult:
        return self.call_async(name, arguments).result(SAFETY)

    def tool_names(self) -> list[str]:
        return [tool.name for tool in self.loop.run(self.session.list_tools, timeout=SAFETY).tools]

    def close(self) -> None:
        if self._stop is not None:
            self.loop.post(self._stop.set)
        try:
            self._task.result(SAFETY)
        finally:
            self.loop.stop()


def text_of(result: mcp_types.CallToolResult) -> str:
    return "\n".join(block.text for block in result.content if block.type == "text")


def images_of(result: mcp_types.CallToolResult) -> list[str]:
    return [block.data for block in result.content if block.type == "image"]


def start_tools(kernel: Kernel) -> dict[str, Any]:
    """Start the notebook tools server in ``kernel``; its ``mcpServers`` entry."""
    spec: dict[str, Any] = json.loads(kernel.text(SETUP).strip().splitlines()[-1])
    return spec


def relay_processes(spec: dict[str, Any]) -> dict[int, str]:
    """Live (not zombie) relay processes serving ``spec``'s socket: pid → state."""
    socket_path = spec["args"][spec["args"].index("--socket") + 1]
    listing = subprocess.run(
        ["ps", "-ww", "-eo", "pid=,stat=,args="], capture_output=True, text=True, check=True
    ).stdout
    found = {}
    for line in listing.splitlines():
        pid, stat, args = line.split(None, 2)
        if "acp_notebook.mcp_relay" in args and socket_path in args and not stat.startswith("Z"):
            found[int(pid)] = stat
    return found


def token_file(spec: dict[str, Any]) -> str:
    return str(spec["args"][spec["args"].index("--token-file") + 1])


def token_of(spec: dict[str, Any]) -> str:
    return Path(token_file(spec)).read_text()


def kernel_value(kernel: Kernel, expression: str) -> Any:
    """The JSON value of ``expression`` evaluated in the kernel (by a cell of its own)."""
    return json.loads(kernel.text(f"print(__import__('json').dumps({expression}))"))


def wait_until(predicate: Callable[[], Any], what: str, timeout: float = SAFETY) -> Any:
    """Poll ``predicate`` until it is truthy; fail after the safety timeout saying what
    was awaited (never an assertion of speed)."""
    deadline = time.monotonic() + timeout
    while not (value := predicate()):
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out ({timeout:g} s safety net) waiting for {what}")
        time.sleep(0.05)
    return value
