"""The agent side of ACP, typed: what a client may ask of an agent, and how it is served.

:class:`Agent` has the shape of the official SDK's ``Agent`` protocol: one snake_case method
per client request, taking the parsed params model and returning the response model, so an
agent is a plain class and a test's fake is one too. A handler whose answer must be followed
by notifications (the command list after ``session/new``, the updates after
``session/set_mode``) returns a :class:`~acp_notebook.protocol.jsonrpc.Reply` of its response:
what it sends then goes out after the answer, never before it. Raise
:class:`~acp_notebook.protocol.errors.RpcError` to answer with an error.

:func:`serve_agent` puts an :class:`Agent` on a :class:`~acp_notebook.protocol.jsonrpc.Peer`:
each request's params are read into their model (a params object that does not fit the
schema is answered ``-32602`` by the peer) before the handler sees them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, TypeAlias, TypeVar

from ..protocol import models as m
from ..protocol.jsonrpc import Peer, Reply

__all__ = ["Agent", "Answer", "serve_agent"]

R = TypeVar("R")
#: A handler's answer: its response, or its response and what to send once it went out.
Answer: TypeAlias = "R | Reply[R]"
if TYPE_CHECKING:
    #: `session/set_config_option` params once read: a select or boolean value, or a value
    #: type this schema does not know, kept raw (spec: unknown variants are not errors).
    ConfigOptionRequest = (
        m.SetSessionConfigOptionSelectRequest
        | m.SetSessionConfigOptionBooleanRequest
        | m.UnknownSetSessionConfigOptionRequest
    )


class Agent(Protocol):
    """Everything a client may ask of an agent, typed (the SDK's ``Agent`` shape)."""

    async def initialize(self, request: m.InitializeRequest) -> m.InitializeResponse:
        """`initialize`: agree on the protocol version; say what the agent can do."""
        ...

    async def authenticate(self, request: m.AuthenticateRequest) -> m.AuthenticateResponse:
        """`authenticate`: log in with one of the methods ``initialize`` offered."""
        ...

    async def logout(self, request: m.LogoutRequest) -> m.LogoutResponse:
        """`logout`: forget the login."""
        ...

    async def new_session(self, request: m.NewSessionRequest) -> Answer[m.NewSessionResponse]:
        """`session/new`: a session in ``cwd`` with the given MCP servers."""
        ...

    async def load_session(self, request: m.LoadSessionRequest) -> Answer[m.LoadSessionResponse]:
        """`session/load`: replay the session's history as updates, then answer."""
        ...

    async def resume_session(
        self, request: m.ResumeSessionRequest
    ) -> Answer[m.ResumeSessionResponse]:
        """`session/resume`: open a known session again, without replay."""
        ...

    async def list_sessions(self, request: m.ListSessionsRequest) -> m.ListSessionsResponse:
        """`session/list`: one page of the known sessions."""
        ...

    async def close_session(self, request: m.CloseSessionRequest) -> m.CloseSessionResponse:
        """`session/close`: stop the session's work and close it in this connection."""
        ...

    async def delete_session(self, request: m.DeleteSessionRequest) -> m.DeleteSessionResponse:
        """`session/delete`: forget the session."""
        ...

    async def set_session_mode(
        self, request: m.SetSessionModeRequest
    ) -> Answer[m.SetSessionModeResponse]:
        """`session/set_mode`: switch the session's mode."""
        ...

    async def set_config_option(
        self, request: ConfigOptionRequest
    ) -> Answer[m.SetSessionConfigOptionResponse]:
        """`session/set_config_option`: set one option; answer with all of them."""
        ...

    async def prompt(self, request: m.PromptRequest) -> m.PromptResponse:
        """`session/prompt`: run a turn, streaming `session/update`s; answer how it stopped."""
        ...

    def cancel(self, notification: m.CancelNotification) -> None:
        """`session/cancel` (a notification): stop the session's turn.

        Synchronous: notifications are applied inline, in arrival order, so it must not block.
        """
        ...


def serve_agent(peer: Peer, agent: Agent) -> None:
    """Serve ``agent``'s methods on ``peer``, each request's params read into its model.

    A model is looked up when its first request arrives (models are made on first lookup),
    so an agent that is never asked to list sessions never makes that model.
    """
    on = peer.handle_request
    on("initialize", lambda p: agent.initialize(m.InitializeRequest.parse(p)))
    on("authenticate", lambda p: agent.authenticate(m.AuthenticateRequest.parse(p)))
    on("logout", lambda p: agent.logout(m.LogoutRequest.parse(_object(p))))
    on("session/new", lambda p: agent.new_session(m.NewSessionRequest.parse(p)))
    on("session/load", lambda p: agent.load_session(m.LoadSessionRequest.parse(p)))
    on("session/resume", lambda p: agent.resume_session(m.ResumeSessionRequest.parse(p)))
    on("session/list", lambda p: agent.list_sessions(m.ListSessionsRequest.parse(_object(p))))
    on("session/close", lambda p: agent.close_session(m.CloseSessionRequest.parse(p)))
    on("session/delete", lambda p: agent.delete_session(m.DeleteSessionRequest.parse(p)))
    on("session/set_mode", lambda p: agent.set_session_mode(m.SetSessionModeRequest.parse(p)))
    on(
        "session/set_config_option",
        lambda p: agent.set_config_option(m.parse(m.SetSessionConfigOptionRequest, p)),
    )
    on("session/prompt", lambda p: agent.prompt(m.PromptRequest.parse(p)))
    peer.handle_notification(
        "session/cancel", lambda p: agent.cancel(m.CancelNotification.parse(p))
    )


def _object(params: Any) -> Any:
    # spec: a request whose params are all optional may leave them out.
    return {} if params is None else params
