"""Which of this session's notebook tools an agent's own permission request is about.

Most agents ask before they call an MCP tool, each naming the tool its own way. The
client's ``notebook`` server (``notebook/tools/``) is recognised in all of them, so the
request is decided with ``notebook`` rules (``decision.py``) instead of as an unknown call:

* ``mcp__notebook__run_code`` (Claude Code: the title, ``_meta.claudeCode.toolName``);
* ``mcp_notebook_run_code`` and ``run_code (notebook MCP Server)`` (Gemini CLI);
* ``notebook/run_code`` (fast-agent), ``notebook__run_code``, ``notebook.run_code``;
* any of those as a string in ``_meta`` or as the call's ``name``;
* a ``rawInput`` naming the server and the tool (``serverName`` / ``toolName``, as
  Qwen Code sends);
* Codex's "Approve MCP tool call" whose text names the server and exactly one of its tools.

Only the tools the server offers now are recognised, and a name must match whole: a
request about ``mcp__notebook__run_code_elsewhere`` is about no notebook tool.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from ..protocol import models as m

__all__ = ["IN_KERNEL", "RUNS_IN_KERNEL", "NotebookServer", "notebook_tool_named"]

#: The notebook tools that run code in the user's kernel, which no sandbox confines: the
#: kernel is the user's (``protocol/sandbox.py`` confines only the agent and its commands).
RUNS_IN_KERNEL = frozenset({"run_code", "run_cell"})
#: What their permission cards say instead of the sandbox's line.
IN_KERNEL = "🔓 unconfined: the code runs in your kernel, which the sandbox never confines"

_SERVER_KEYS = ("serverName", "server_name", "server", "mcpServer", "mcp_server")
_TOOL_KEYS = ("toolName", "tool_name", "tool", "mcpTool", "mcp_tool")
#: How deep ``_meta`` is searched for a tool name.
_META_DEPTH = 3


@dataclass(frozen=True)
class NotebookServer:
    """This session's notebook server as the agent was offered it: its ``mcpServers`` name
    and its tools now (name → read-only)."""

    name: str
    tools: Callable[[], Mapping[str, bool]]


class AskedCall(Protocol):
    """What a request's tool call says about itself (a ``ToolCallState`` does)."""

    @property
    def title(self) -> str: ...
    @property
    def name(self) -> str | None: ...
    @property
    def meta(self) -> dict[str, Any] | None: ...
    @property
    def raw_input(self) -> Any: ...
    @property
    def content(self) -> Sequence[m.ToolCallContent]: ...


def _names(server: str, tool: str) -> list[str]:
    return [
        f"mcp__{server}__{tool}",
        f"mcp_{server}_{tool}",
        f"{server}/{tool}",
        f"{server}__{tool}",
        f"{server}.{tool}",
    ]


def _whole(name: str) -> re.Pattern[str]:
    return re.compile(rf"(?<![\w./-]){re.escape(name)}(?![\w/-])")


def _strings(value: Any, depth: int) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif depth > 0 and isinstance(value, dict):
        for item in value.values():
            yield from _strings(item, depth - 1)
    elif depth > 0 and isinstance(value, list):
        for item in value[:20]:
            yield from _strings(item, depth - 1)


def _text(call: AskedCall) -> str:
    parts = [call.title]
    for content in call.content:
        if isinstance(content, m.ContentToolCallContent):
            block = content.content
            if isinstance(block, m.TextContentBlock):
                parts.append(block.text)
    return "\n".join(parts)


def notebook_tool_named(call: AskedCall, server: str, tools: Collection[str]) -> str | None:
    """The tool of ``server`` (one of ``tools``) the agent's request ``call`` is about, or None."""
    if not server or not tools:
        return None
    raw = call.raw_input if isinstance(call.raw_input, dict) else {}
    said_server = next((raw[k] for k in _SERVER_KEYS if isinstance(raw.get(k), str)), None)
    said_tool = next((raw[k] for k in _TOOL_KEYS if isinstance(raw.get(k), str)), None)
    if said_server == server and said_tool in tools:
        return said_tool
    named = [call.title, call.name or "", *_strings(call.meta, _META_DEPTH)]
    text = _text(call)
    for tool in tools:
        patterns = [_whole(name) for name in _names(server, tool)]
        gemini = re.compile(
            rf"(?<![\w/-]){re.escape(tool)} \({re.escape(server)} MCP Server\)", re.IGNORECASE
        )
        if any(p.search(s) for s in named for p in (*patterns, gemini)):
            return tool
    if "mcp tool" in text.lower() and _whole(server).search(text):
        mentioned = [tool for tool in tools if _whole(tool).search(text)]
        if len(mentioned) == 1:
            return mentioned[0]
    return None
