"""Errors of the JSON-RPC layer: what the peer raised, and why a connection ended."""

from __future__ import annotations

from typing import Any

# JSON-RPC 2.0 codes, plus the ones ACP adds (schema `ErrorCode`).
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
REQUEST_CANCELLED = -32800
AUTH_REQUIRED = -32000
RESOURCE_NOT_FOUND = -32002


#: How much of an error's ``data`` is shown with it.
_DETAIL_CHARS = 1000


def _strings(data: Any, depth: int = 0) -> list[str]:
    """The strings in an error's ``data``: itself, or a mapping's values (two levels)."""
    if isinstance(data, str):
        return [data]
    if isinstance(data, dict) and depth < 2:
        return [text for value in data.values() for text in _strings(value, depth + 1)]
    return []


class RpcError(Exception):
    """A JSON-RPC error object: raised by a handler to answer with it, or raised
    from :meth:`Peer.request` when the other side answered with it."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data

    def to_wire(self) -> dict[str, Any]:
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error

    @classmethod
    def from_wire(cls, error: Any) -> RpcError:
        if not isinstance(error, dict):
            return cls(INTERNAL_ERROR, f"malformed error object: {error!r}")
        code = error.get("code")
        message = error.get("message")
        return cls(
            code if isinstance(code, int) else INTERNAL_ERROR,
            message if isinstance(message, str) else repr(message),
            error.get("data"),
        )

    @property
    def detail(self) -> str:
        """What ``data`` says, as text: a string, or a JSON object's string fields
        (``message``, ``details``, …; one level down too), in order, without repeats.

        Agents put the reason there ("Internal error" with ``{"details": "Invalid API
        key · Please run /login"}``), so it is shown with the error, never dropped.
        """
        parts: list[str] = []
        for text in _strings(self.data):
            text = text.strip()
            if text and text not in parts and text != self.message:
                parts.append(text)
        joined = "; ".join(parts)
        return joined if len(joined) <= _DETAIL_CHARS else joined[:_DETAIL_CHARS] + " …"

    def __str__(self) -> str:
        detail = self.detail
        return f"{self.message} (code {self.code})" + (f": {detail}" if detail else "")

    def __repr__(self) -> str:
        return f"RpcError({self.code!r}, {self.message!r}, {self.data!r})"


class ConnectionClosed(Exception):
    """The peer's stream ended (or we closed it) while a request was pending,
    or a message was sent after the end. The message says why in one sentence."""
