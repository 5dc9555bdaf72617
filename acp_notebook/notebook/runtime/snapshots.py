"""Read-only snapshots of the notebook's sessions and pending permission requests.

A :class:`~acp_notebook.client.session.Session` belongs to the agent loop thread: it
changes while an agent streams, and only that thread may touch it. What the Python API
hands to other threads is one of these instead, taken on the loop: plain frozen values
that stay as they were when asked (ask again for fresh ones).
"""

from __future__ import annotations

from dataclasses import dataclass

from ...client.permissions import PermissionRequest
from ...client.session import Session


@dataclass(frozen=True)
class SessionSnapshot:
    """One named session of this notebook, as it was when asked."""

    agent: str
    #: The notebook's name for it (``-s NAME``).
    name: str
    session_id: str
    title: str | None
    #: The current mode's id, if the agent has modes.
    mode: str | None
    #: Config option id → the name of its current value.
    options: tuple[tuple[str, str], ...]
    #: The slash commands the agent announced, without the slash.
    commands: tuple[str, ...]
    #: A turn is running or queued.
    busy: bool
    #: Keys of the permission requests waiting for an answer (see ``acp.answer``).
    pending: tuple[str, ...]

    @classmethod
    def of(cls, agent: str, name: str, session: Session) -> SessionSnapshot:
        """The snapshot of ``session`` (agent loop thread)."""
        transcript = session.transcript
        return cls(
            agent=agent,
            name=name,
            session_id=session.session_id,
            title=transcript.title,
            mode=transcript.current_mode_id,
            options=tuple(
                (option.id, transcript.config_value_name(option))
                for option in transcript.known_config_options
            ),
            commands=tuple(command.name for command in transcript.commands),
            busy=any(not turn.done for turn in session.turns),
            pending=tuple(pending_key(name, r) for r in session.permissions.pending),
        )


def pending_key(session_name: str, request: PermissionRequest) -> str:
    """The notebook-wide key of a permission request: the broker's key (``perm-1``)
    restarts in every session, so it is qualified by the session's name."""
    return f"{session_name}/{request.key}"


@dataclass(frozen=True)
class PendingPermission:
    """A permission request waiting for an answer, as it was when asked."""

    agent: str
    session: str
    #: What ``acp.answer(key, option)`` takes: ``default/perm-1``.
    key: str
    #: The tool call's title.
    title: str
    #: The options' names, in the agent's order.
    options: tuple[str, ...]

    @classmethod
    def of(cls, agent: str, session: str, request: PermissionRequest) -> PendingPermission:
        title = request.call.title if request.call is not None else None
        return cls(
            agent=agent,
            session=session,
            key=pending_key(session, request),
            title=str(title or request.tool_call.get("title") or request.tool_call_id),
            options=tuple(option.name for option in request.options),
        )
