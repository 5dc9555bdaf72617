"""Secret values never reach a log, a trace or a saved message list.

Applied where messages are *kept* (the notebook's message log, ``--trace``,
``acp.messages().save()``), never on the wire: the agent still receives every value
unchanged. What counts as secret:

* the values of MCP servers' ``env`` and HTTP ``headers`` (``session/new``, ``load``,
  ``resume``: API keys and bearer tokens travel there);
* fields named like a secret (``password``, ``token``, ``api_key``, ...) of an accepted
  elicitation's ``content`` (the same rule as the transcript's, :func:`is_secret_name`);
* any text equal to, or containing, a known secret value: the login variables of the
  password field and ``--env`` (which reach only the agent's environment, but an agent may
  echo them back).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable
from dataclasses import replace
from typing import Any

from ..protocol.jsonrpc import Observer, TraceEvent
from .elicitation.redaction import REDACTED, is_secret_name

__all__ = ["REDACTED", "redact_event", "redact_message", "redacting"]

#: Shorter values are not searched for in text (they would redact ordinary words).
_MIN_SECRET_CHARS = 4


def _name_value_pairs(entries: Any) -> Any:
    if not isinstance(entries, list):
        return entries
    return [
        {**entry, "value": REDACTED} if isinstance(entry, dict) and "value" in entry else entry
        for entry in entries
    ]


def _mcp_server(server: Any) -> Any:
    if not isinstance(server, dict):
        return server
    return {
        key: _name_value_pairs(value) if key in ("env", "headers") else value
        for key, value in server.items()
    }


def redact_message(message: Any, secrets: Collection[str] = ()) -> Any:
    """A copy of ``message`` with every secret value replaced by :data:`REDACTED`."""
    values = sorted((s for s in secrets if len(s) >= _MIN_SECRET_CHARS), key=len, reverse=True)

    def text(value: str) -> str:
        for secret in values:
            if secret in value:
                value = value.replace(secret, REDACTED)
        return value

    def walk(value: Any) -> Any:
        if isinstance(value, str):
            return text(value) if values else value
        if isinstance(value, list):
            return [walk(item) for item in value]
        if not isinstance(value, dict):
            return value
        out = {key: walk(item) for key, item in value.items()}
        if isinstance(out.get("mcpServers"), list):
            out["mcpServers"] = [_mcp_server(server) for server in out["mcpServers"]]
        content = out.get("content")
        if out.get("action") == "accept" and isinstance(content, dict):
            out["content"] = {
                key: REDACTED if is_secret_name(str(key)) else item for key, item in content.items()
            }
        return out

    return walk(message)


def redact_event(event: TraceEvent, secrets: Collection[str] = ()) -> TraceEvent:
    """``event`` as it may be kept: its message (or invalid line) redacted."""
    if event.message is not None:
        return replace(event, message=redact_message(event.message, secrets))
    if event.invalid is not None and secrets:
        return replace(event, invalid=redact_message(event.invalid, secrets))
    return event


def redacting(observer: Observer, secrets: Callable[[], Iterable[str]] = tuple) -> Observer:
    """``observer`` fed redacted events; ``secrets()`` gives the known secret values at
    the time of each message (a login adds some while the connection runs)."""

    def observe(event: TraceEvent) -> None:
        observer(redact_event(event, frozenset(secrets())))

    return observe
