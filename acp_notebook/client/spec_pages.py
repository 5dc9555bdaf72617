"""Where the specs define each message: the ACP page of each method and ``sessionUpdate``
kind, and the MCP page of each method the notebook tools speak (the inspector links them)."""

from __future__ import annotations

__all__ = [
    "MCP_SPEC",
    "MCP_SPEC_ROOT",
    "METHOD_SPEC",
    "SPEC_ROOT",
    "UPDATE_SPEC",
    "mcp_spec_link",
    "spec_link",
]

SPEC_ROOT = "https://agentclientprotocol.com/protocol/v1/"

#: The spec section that defines each method: the schema's own "See protocol docs" link where it
#: has one, else the page of the protocol docs that covers it (pages named by the schema or the
#: docs' sources, never guessed).
METHOD_SPEC: dict[str, str] = {
    "initialize": "initialization",
    "authenticate": "authentication",
    "logout": "authentication",
    "session/new": "session-setup#creating-a-session",
    "session/load": "session-setup#loading-sessions",
    "session/resume": "session-setup",
    "session/list": "session-setup",
    "session/close": "session-setup",
    "session/delete": "session-setup",
    "session/set_mode": "session-modes",
    "session/set_config_option": "session-config-options",
    "session/prompt": "prompt-turn#1-user-message",
    "session/cancel": "prompt-turn#cancellation",
    "session/update": "prompt-turn#3-agent-reports-output",
    "session/request_permission": "tool-calls#requesting-permission",
    "fs/read_text_file": "overview#client",
    "fs/write_text_file": "overview#client",
    "terminal/create": "terminals",
    "terminal/output": "terminals",
    "terminal/release": "terminals",
    "terminal/wait_for_exit": "terminals",
    "terminal/kill": "terminals",
    "elicitation/create": "elicitation",
    "elicitation/complete": "elicitation#url-completion",
    "$/cancel_request": "cancellation",
}

#: The spec section of each ``sessionUpdate`` kind.
UPDATE_SPEC: dict[str, str] = {
    "user_message_chunk": "prompt-turn#3-agent-reports-output",
    "agent_message_chunk": "prompt-turn#3-agent-reports-output",
    "agent_thought_chunk": "prompt-turn#3-agent-reports-output",
    "tool_call": "tool-calls#creating",
    "tool_call_update": "tool-calls#updating",
    "plan": "agent-plan",
    "available_commands_update": "prompt-turn#3-agent-reports-output",
    "current_mode_update": "session-modes",
    "config_option_update": "session-config-options",
    "session_info_update": "session-setup",
    "usage_update": "prompt-turn#3-agent-reports-output",
    "notice": "../../rfds/session-notices",
    "compaction_update": "prompt-turn#3-agent-reports-output",
    "compaction_summary_chunk": "prompt-turn#3-agent-reports-output",
}


def spec_link(method: str | None, kind: str | None = None) -> str | None:
    """The spec URL for a message of ``method`` (and ``sessionUpdate`` ``kind``); extension
    methods (``_…``) get the extensibility page, unknown ones none."""
    if kind is not None and kind in UPDATE_SPEC:
        return _url(UPDATE_SPEC[kind])
    if method is None:
        return None
    if method.startswith("_"):
        return SPEC_ROOT + "extensibility"
    page = METHOD_SPEC.get(method)
    return _url(page) if page is not None else None


def _url(page: str) -> str:
    # "../../rfds/x" names a page outside the v1 protocol docs (an RFD).
    return (
        "https://agentclientprotocol.com/" + page[6:]
        if page.startswith("../../")
        else SPEC_ROOT + page
    )


MCP_SPEC_ROOT = "https://modelcontextprotocol.io/specification/2025-06-18/"

#: The spec page of each method the notebook tools speak.
MCP_SPEC: dict[str, str] = {
    "initialize": "basic/lifecycle#initialization",
    "notifications/initialized": "basic/lifecycle#initialization",
    "ping": "basic/utilities/ping",
    "tools/list": "server/tools#listing-tools",
    "tools/call": "server/tools#calling-tools",
    "notifications/tools/list_changed": "server/tools#list-changed-notification",
    "notifications/cancelled": "basic/utilities/cancellation",
}


def mcp_spec_link(method: str | None) -> str:
    """The MCP spec page of ``method`` (its overview for methods not listed)."""
    page = MCP_SPEC.get(method or "")
    return MCP_SPEC_ROOT + (page if page is not None else "basic")
