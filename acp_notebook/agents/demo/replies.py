"""What every demonstration may need: sentences for a client error, a capability the
client did not advertise and how to use a command, and the pace of paced steps.

A scene is an ``async`` function ``(turn, argument) -> stop reason``; :data:`Scene` is
its type.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from ...protocol.errors import RpcError
from .turn import Turn

__all__ = ["STEP_DELAY", "Scene", "StopReason", "error_text", "missing_capability", "usage"]

StopReason = str
Scene = Callable[[Turn, str], Awaitable[StopReason]]

#: Seconds between the steps of the paced demonstrations (so a UI visibly progresses).
STEP_DELAY = 0.2


def error_text(exc: RpcError) -> str:
    """A client's error answer, for a reply: its message and its code."""
    return f"{exc.message.rstrip('.')} (JSON-RPC error {exc.code})"


def missing_capability(capability: str, what: str) -> str:
    """Why a step is skipped: the client did not advertise ``capability``."""
    return (
        f"The client did not advertise `{capability}` in `initialize`, so I may not {what} "
        "(spec: an omitted capability means unsupported). A real agent would fall back to "
        "its own tools or tell you it cannot do this; I skip the step."
    )


async def usage(turn: Turn, command: str) -> StopReason:
    """Say how ``command`` is used; the turn ends normally."""
    return await turn.reply(f"Usage: `{command}`. Send `/help` for every command.")
