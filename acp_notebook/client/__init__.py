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

from typing import TYPE_CHECKING

from ..protocol.lazy_names import imported_on_first_use

if TYPE_CHECKING:
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
    from .policy import Policy
    from .session import PromptTurn, Session

#: Where each exported name is defined. They are imported when first asked for, so that
#: importing one submodule (``client.rules``, ``client.policy``) does not load the whole
#: client and its protocol models (``%load_ext acp_notebook`` needs only a few light ones).
_HOMES = {
    "ConnectionClosed": "..protocol.errors",
    "RpcError": "..protocol.errors",
    "ClientConnection": ".connection",
    "SessionOptions": ".connection",
    "client_capabilities": ".connection",
    "connect": ".connection",
    "AcpClientError": ".errors",
    "AuthRequired": ".errors",
    "PromptNotSupported": ".errors",
    "ProtocolVersionMismatch": ".errors",
    "SessionIdInUse": ".errors",
    "TurnTimeout": ".errors",
    "UnsupportedByAgent": ".errors",
    "AgentRequests": ".handlers",
    "Policy": ".policy",
    "PromptTurn": ".session",
    "Session": ".session",
}


__getattr__ = imported_on_first_use(__name__, _HOMES)


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
