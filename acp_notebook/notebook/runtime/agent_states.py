"""What every agent of this notebook is doing, published to the page: the sidebar lists
each session with its state and a way to its waiting card; the notebook's tab and the
document's title show a badge while a permission waits (``labextension/src/sidebar.ts``,
``badge.ts``).

A session's state, in this order (the first that holds):

1. ``waiting_login``: its agent asked for a login and the prompt waits in the cell;
2. ``waiting_permission``: a permission request of the session waits for an answer;
3. ``running``: a turn is running or queued (a turn starting its agent included);
4. ``idle``.

The states are derived from the sessions and the turns each time something may have
changed (a transcript change, a turn's start and end, a login prompt shown or closed),
on the agent loop, and an ``agents`` message goes to every connected page only when they
differ from what was sent last; a page that connects gets them at once. Without the
extension nothing is sent (``%acp --status`` and ``acp.pending()`` say the same in words).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from ..frontend import frontends

if TYPE_CHECKING:
    from ...client.session import Session
    from ..turn.handle import TurnHandle
    from .agent import AgentRuntime
    from .loop import AgentLoop

State = Literal["waiting_login", "waiting_permission", "running", "idle"]


@dataclass(frozen=True)
class SessionState:
    """One session of the notebook as the page shows it."""

    agent: str
    #: The notebook's name for it (``-s NAME``).
    session: str
    state: State
    #: The ``%acp`` cell of its running turn, where its card waits (None: no turn, or a
    #: frontend that does not say which cell runs).
    cell_id: str | None
    #: The session's title, as the agent named it.
    title: str | None
    #: Permission requests waiting.
    waiting: int

    def wire(self) -> dict[str, Any]:
        return {
            "agent": self.agent,
            "session": self.session,
            "state": self.state,
            "cell_id": self.cell_id,
            "title": self.title,
            "waiting": self.waiting,
        }


def session_states(
    runtimes: Iterable[AgentRuntime], handles: Iterable[TurnHandle]
) -> list[SessionState]:
    """Every session of ``runtimes``, and every session a running turn is opening, with
    its state (see the module docstring; agent loop thread)."""
    running: dict[tuple[str, str], TurnHandle] = {}
    for handle in handles:
        if not handle.done:
            running[(handle.settings.agent, handle.settings.session)] = handle
    states: dict[tuple[str, str], SessionState] = {}
    for runtime in runtimes:
        names: dict[str, Session | None] = dict(runtime.sessions)
        for agent, name in running:
            if agent == runtime.key:
                names.setdefault(name, None)  # its turn is opening it
        for name, session in names.items():
            turn = running.get((runtime.key, name))
            states[(runtime.key, name)] = _state(runtime, name, session, turn)
    return list(states.values())


def _state(
    runtime: AgentRuntime, name: str, session: Session | None, handle: TurnHandle | None
) -> SessionState:
    waiting = len(session.permissions.pending) if session is not None else 0
    busy = handle is not None or (
        session is not None and any(not turn.done for turn in session.turns)
    )
    state: State
    if runtime.login_waiting and handle is not None:
        state = "waiting_login"
    elif waiting:
        state = "waiting_permission"
    elif busy:
        state = "running"
    else:
        state = "idle"
    title = session.transcript.title if session is not None else None
    cell_id = handle.settings.cell_id if handle is not None else None
    return SessionState(runtime.key, name, state, cell_id, title, waiting)


class AgentStates:
    """Publishes :func:`session_states` to the connected pages when they change."""

    def __init__(
        self,
        states: Callable[[], list[SessionState]],
        loop: Callable[[], AgentLoop],
    ) -> None:
        self._states = states
        self._loop = loop
        self._sent: list[dict[str, Any]] | None = None
        #: The sessions followed (each once), with what stops following them.
        self._followed: dict[int, tuple[Session, Callable[[], None]]] = {}
        self._stop_watching = frontends.on_change(self._on_connections)

    def follow(self, session: Session) -> None:
        """Publish again whenever ``session``'s transcript changes (agent loop thread)."""
        if id(session) not in self._followed:
            stop = session.transcript.subscribe(lambda _: self.poke())
            self._followed[id(session)] = (session, stop)
        self.poke()

    def poke(self) -> None:
        """Something may have changed: send the states if they did (agent loop thread)."""
        wire = [state.wire() for state in self._states()]
        if wire == self._sent:
            return
        self._sent = wire
        self._send(wire)

    def _send(self, wire: list[dict[str, Any]]) -> None:
        for live in frontends.connected():
            live.send("agents", sessions=wire)

    def _on_connections(self) -> None:
        # A page connected (comm thread): it gets the states as they are, from the loop.
        def resend() -> None:
            self._sent = None
            self.poke()

        self._loop().post(resend)

    def close(self) -> None:
        self._stop_watching()
        for _, unsubscribe in self._followed.values():
            unsubscribe()
        self._followed.clear()
