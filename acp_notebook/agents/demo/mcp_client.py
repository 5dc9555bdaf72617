"""The demo agent as an MCP client of a server the client gave in ``session/new`` (the
notebook's ``notebook`` server), over stdio with the official ``mcp`` client, imported
on first use (starting the demo agent never waits for it).

    async with connect(server) as tools:
        if "edit_cell" in await tools.names():
            answer = await tools.call("edit_cell", {"id": ..., "source": ...})
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ...protocol import models as m

if TYPE_CHECKING:
    from mcp.client.session import ClientSession

__all__ = ["McpAnswer", "McpTools", "connect"]


@dataclass(frozen=True)
class McpAnswer:
    """A tool's result: its text blocks joined, and whether it is an error."""

    text: str
    is_error: bool


class McpTools:
    """One connected MCP server's tools."""

    def __init__(self, session: ClientSession) -> None:
        self._session = session

    async def names(self) -> list[str]:
        return [tool.name for tool in (await self._session.list_tools()).tools]

    async def call(self, name: str, arguments: Mapping[str, Any]) -> McpAnswer:
        result = await self._session.call_tool(name, dict(arguments))
        text = "\n".join(block.text for block in result.content if block.type == "text")
        return McpAnswer(text, bool(result.is_error))


@contextlib.asynccontextmanager
async def connect(server: m.McpServerStdio) -> AsyncIterator[McpTools]:
    """Start ``server`` (a stdio MCP server as ``session/new`` gave it) and initialize."""
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(
        command=server.command,
        args=list(server.args),
        env={variable.name: variable.value for variable in server.env or ()} or None,
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield McpTools(session)
