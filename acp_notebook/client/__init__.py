"""The ACP client without Jupyter: connect to an agent, open sessions, prompt.

    async with connect([sys.executable, "-m", "acp_notebook.agents.demo"]) as conn:
        session = await conn.new_session(".", policy="allow")
        turn = await session.prompt("/run echo hi")
        print(turn.bundle()["text/markdown"])

The agent's requests (files, terminals, permissions, elicitations) are served by each
session; pass ``handlers=`` to :func:`connect` to serve any of them yourself (the methods of
:class:`AgentRequests`).
"""

from __future__ import annotations

from ..protocol.errors import ConnectionClosed, RpcError
from .connection import ClientConnection, SessionOptions, client_capabilities, connect
from .errors import (
    AcpClientError,
    AuthRequired,
    PromptNotSupported,
    ProtocolVersionMismatch,
    SessionIdInUse,
    TurnTimeout,
    UnsupportedByAgent,
)
from .handlers import AgentRequests
from .permissions import Policy
from .session import PromptTurn, Session

__all__ = [
    "AcpClientError",
    "AgentRequests",
    "AuthRequired",
    "ClientConnection",
    "ConnectionClosed",
    "Policy",
    "PromptNotSupported",
    "PromptTurn",
    "ProtocolVersionMismatch",
    "RpcError",
    "Session",
    "SessionIdInUse",
    "SessionOptions",
    "TurnTimeout",
    "UnsupportedByAgent",
    "client_capabilities",
    "connect",
]
