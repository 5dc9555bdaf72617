"""Errors the client raises; each message is one sentence a user can act on."""

from __future__ import annotations

from typing import Any

from ..protocol.errors import AUTH_REQUIRED, RpcError
from .auth_methods import auth_method_facts

__all__ = [
    "AcpClientError",
    "AuthRequired",
    "HandshakeTimeout",
    "PromptNotSupported",
    "ProtocolVersionMismatch",
    "TurnTimeout",
    "UnsupportedByAgent",
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
    """The agent did not answer `initialize` or `session/new|load|resume` in time."""


class ProtocolVersionMismatch(AcpClientError):
    """The agent answered `initialize` with a protocol version we do not speak."""


class AuthRequired(RpcError):
    """The agent answered `auth_required` (-32000): its own message and the ways to log in."""

    def __init__(self, message: str, data: Any, auth_methods: list[Any]) -> None:
        super().__init__(AUTH_REQUIRED, message, data)
        self.auth_methods = auth_methods

    def __str__(self) -> str:
        facts = [auth_method_facts(method) for method in self.auth_methods]
        names = ", ".join(f"{fact.name} (`{fact.id}`)" for fact in facts)
        hint = f" Authentication methods it offers: {names}." if names else ""
        return f"The agent needs authentication: {self.message}{hint}"


class TurnTimeout(AcpClientError):
    """A prompt turn did not end in time, nor after `session/cancel` and a grace period."""


class PromptNotSupported(AcpClientError):
    """The prompt holds content the agent did not advertise (image, audio, embedded resource)."""
