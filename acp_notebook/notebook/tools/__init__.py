"""The ``notebook`` MCP server: the agent's tools in the user's live kernel.

    runner = MainThreadRunner()                    # once per kernel, on the main thread
    registry = kernel_tools()                      # once per kernel; frontends register more
    server = NotebookToolsServer(agent_loop, runner, shell, session, approve, show, registry)
    mcp_servers.append(server.start())             # the stdio entry for session/new
    server.close()                                 # when the session ends

Agent ─(MCP over stdio)▶ relay (``python -m acp_notebook.mcp_relay``) ─(private socket,
secret)▶ agent loop thread: the MCP session, approval ─▶ kernel main thread: the tool's
work in ``user_ns`` ─▶ the result back to the agent, and run_code's output to ``show``.
Importing this package does not import ``mcp``.
"""

from .approval import Approve, Approved, Decision, Denied, ToolApproval
from .endpoint import McpServerSpec
from .execute import CodeResult
from .kernel_tools import KERNEL_TOOLS, kernel_tools
from .registry import NotebookTool, ToolContext, ToolImage, ToolRegistry, ToolResult
from .runner import MainThreadRunner
from .server import SERVER_NAME, NotebookToolsServer

__all__ = [
    "KERNEL_TOOLS",
    "SERVER_NAME",
    "Approve",
    "Approved",
    "CodeResult",
    "Decision",
    "Denied",
    "MainThreadRunner",
    "McpServerSpec",
    "NotebookTool",
    "NotebookToolsServer",
    "ToolApproval",
    "ToolContext",
    "ToolImage",
    "ToolRegistry",
    "ToolResult",
    "kernel_tools",
]
