"""Errors the client raises; each message is one sentence a user can act on."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from ..protocol.errors import AUTH_REQUIRED, RpcError
from ..protocol.tree import Stopped
from .auth import AuthMethodInfo

__all__ = [
    "AcpClientError",
    "AuthRequired",
    "HandshakeTimeout",
    "PromptNotSupported",
    "ProtocolVersionMismatch",
    "SessionIdInUse",
    "TurnTimeout",
    "UnsupportedByAgent",
    "looks_like_auth",
]


class AcpClientError(Exception):
    """Base of the client's own errors."""


class UnsupportedByAgent(AcpClientError):
    """The agent did not advertise the capability a method needs."""

    def __init__(self, method: str, capability: str, agent: str = "the agent") -> None:
        super().__init__(
            f"{agent} does not support {method} (it did not advertise `{capability}`)."
        )
        self.method = method
        self.capability = capability


class HandshakeTimeout(AcpClientError):
    """The agent did not answer `initialize`, `authenticate` or `session/new|load|resume`
    in time: which request, within how long, and its last stderr lines; once the agent
    was stopped for it, :meth:`sentence` says what that ended too."""

    ADVICE = "check that it is an ACP agent, or allow it more time with a longer timeout."

    def __init__(self, agent: str, method: str, seconds: float, stderr: Sequence[str] = ()) -> None:
        self.agent = agent
        self.method = method
        self.seconds = seconds
        self.stderr = list(stderr)
        super().__init__(self.sentence())

    def sentence(self, stopped: Stopped | None = None) -> str:
        """One sentence: the request without an answer, the agent's last words, what
        stopping it ended (``stopped``), and what the user can do."""
        said = f" (its last stderr lines: {' | '.join(self.stderr)})" if self.stderr else ""
        ended = f", {stopped.clause()}" if stopped is not None else ""
        return (
            f"{self.agent} did not answer `{self.method}` within {self.seconds:g} s"
            f"{said}{ended}; {self.ADVICE}"
        )


class ProtocolVersionMismatch(AcpClientError):
    """The agent answered `initialize` with a protocol version we do not speak."""


class SessionIdInUse(AcpClientError):
    """The agent answered `session/new` with the id of a session already open."""


class AuthRequired(RpcError):
    """The agent wants a login: it answered `auth_required` (-32000), or an error whose
    message or data talks of logging in, keys or credentials (:func:`looks_like_auth`).
    Its own message, the ways to log in it offers, and the original error."""

    def __init__(
        self, code: int, message: str, data: Any, auth_methods: Sequence[AuthMethodInfo]
    ) -> None:
        super().__init__(code, message, data)
        self.auth_methods = list(auth_methods)

    @property
    def said(self) -> str:
        """The agent's own words: its message, and what its ``data`` adds."""
        return self.message + (f": {self.detail}" if self.detail else "")

    def __str__(self) -> str:
        names = ", ".join(method.label for method in self.auth_methods)
        hint = f" Authentication methods it offers: {names}." if names else ""
        return f"The agent needs authentication: {self.said}{hint}"


#: Words of an error that is about logging in (case-insensitive; "author" is not one).
_AUTH_WORDS = (
    r"log ?in|/login|not logged|authenticat|unauthori[sz]|\bauth\b|auth[_ -]required|"
    r"api[ _-]?key|credential|access token|\b401\b"
)


def looks_like_auth(error: RpcError) -> bool:
    """Whether ``error`` means "log in first": the `auth_required` code, or words about
    logging in, keys or credentials in its message or data (agents answer a missing login
    with -32603 "Internal error" and the reason in ``data``)."""
    # Compiled on the first error (re caches it), not at import: case-insensitive, it
    # takes milliseconds to compile, and most turns meet no error.
    return error.code == AUTH_REQUIRED or bool(
        re.search(_AUTH_WORDS, f"{error.message} {error.detail}", re.IGNORECASE)
    )


class TurnTimeout(AcpClientError):
    """A prompt turn did not end in time, nor after `session/cancel` and a grace period;
    once the agent was stopped for it, :meth:`sentence` says what that ended too."""

    def __init__(self, seconds: float, grace: float) -> None:
        self.seconds = seconds
        self.grace = grace
        super().__init__(self.sentence())

    def sentence(self, stopped: Stopped | None = None) -> str:
        ended = f", {stopped.clause()}" if stopped is not None else ""
        return (
            f"The agent did not finish the turn within {self.seconds:g} s, nor confirm "
            f"the cancellation within {self.grace:g} s{ended}."
        )


class PromptNotSupported(AcpClientError):
    """The prompt holds content the agent did not advertise (image, audio, embedded resource)."""
