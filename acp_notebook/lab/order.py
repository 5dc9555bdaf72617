"""The protocol's order, as a learner meets it: which step may come when.

:func:`order_problem` looks at a lab's state before a message goes out and says, in one
sentence, why it cannot go yet (``session/prompt before session/new: there is no session yet —
call new_session() first``), or None. The rules are the spec's: the connection is initialized
once, before anything else; a session exists before it is prompted; one prompt at a time per
session; capabilities the agent did not advertise are not used.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .stepper import Stepper

__all__ = ["order_problem"]

#: Methods about one session: they need one open.
_SESSION_METHODS = frozenset(
    {"session/prompt", "session/cancel", "session/set_mode", "session/set_config_option"}
)
#: Methods an agent offers only with a capability: (where it is advertised, how to read it).
_CAPABILITIES: dict[str, tuple[str, tuple[str, ...]]] = {
    "session/load": ("agentCapabilities.loadSession", ("loadSession",)),
    "session/list": ("sessionCapabilities.list", ("sessionCapabilities", "list")),
    "session/resume": ("sessionCapabilities.resume", ("sessionCapabilities", "resume")),
    "session/close": ("sessionCapabilities.close", ("sessionCapabilities", "close")),
    "session/delete": ("sessionCapabilities.delete", ("sessionCapabilities", "delete")),
    "logout": ("agentCapabilities.auth.logout", ("auth", "logout")),
}


def _advertised(capabilities: Any, path: tuple[str, ...]) -> bool:
    node = capabilities
    for key in path:
        node = node.get(key) if isinstance(node, Mapping) else None
    return node is not None and node is not False


def order_problem(lab: Stepper, method: str, params: Mapping[str, Any] | None) -> str | None:
    """Why ``method`` cannot be sent now, in one sentence; None when it can."""
    initialized = lab.initialized
    if method == "initialize":
        if initialized is not None:
            return (
                f"initialize was already answered (protocol version "
                f"{initialized.get('protocolVersion')}): a connection is initialized once."
            )
        return None
    if initialized is None:
        return f"{method} before initialize: the connection is not initialized yet — call initialize() first."
    if method == "authenticate":
        offered = [
            str(a.get("id")) for a in initialized.get("authMethods") or [] if isinstance(a, dict)
        ]
        wanted = (params or {}).get("methodId")
        if wanted not in offered:
            return (
                f"authenticate with {wanted!r}: the agent offered "
                + (", ".join(repr(o) for o in offered) if offered else "no auth method")
                + " in its initialize answer — use one of those."
            )
    if method in _CAPABILITIES:
        where, path = _CAPABILITIES[method]
        if not _advertised(initialized.get("agentCapabilities") or {}, path):
            return f"{method}: the agent did not advertise {where}, so a client must not call it."
    if method in _SESSION_METHODS:
        if lab.session_id is None:
            return (
                f"{method} before session/new: there is no session yet — call new_session() first."
            )
        running = lab.turn is not None and not lab.turn.done()
        if method == "session/prompt" and running:
            return (
                "session/prompt while a prompt is running: one prompt at a time per session — "
                "`await lab.turn` or `await lab.cancel()` first."
            )
        if method == "session/cancel" and not running:
            return (
                "session/cancel with no prompt running: there is nothing to cancel — "
                "start one with lab.start_prompt(...) first."
            )
    return None
