"""What every view of one turn needs from its surroundings, passed down as one object."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from ..client.display import TerminalLookup
from ..client.elicitation import ElicitationBroker
from ..client.permissions import PermissionBroker
from ..client.terminals import TerminalSnapshot
from ..client.transcript import Transcript, TurnRecord

#: ``post(fn)``: run ``fn`` on the agent loop thread (thread-safe, returns at once).
Post = Callable[[Callable[[], Any]], Any]


@dataclass
class ViewContext:
    #: Runs a function on the agent loop thread; the only thing click handlers call.
    post: Post
    #: The session's directory: paths inside it are shown relative to it.
    cwd: str | None = None
    #: ``Session.terminal_view``: a terminal's output, also after `terminal/release`.
    terminals: TerminalLookup | None = None
    #: Decides permission requests when a prompt's button is pressed.
    broker: PermissionBroker | None = None


class TurnLike(Protocol):
    """What the turn view reads of a ``PromptTurn``."""

    @property
    def state(self) -> str: ...
    @property
    def record(self) -> TurnRecord | None: ...
    @property
    def stop_reason(self) -> str | None: ...
    @property
    def error(self) -> str | None: ...
    @property
    def cancel_requested(self) -> bool: ...
    @property
    def done(self) -> bool: ...
    @property
    def duration(self) -> float | None: ...


class SessionLike(Protocol):
    """What the turn view reads of a ``Session`` (a plain fake satisfies it in tests)."""

    @property
    def transcript(self) -> Transcript: ...
    @property
    def permissions(self) -> PermissionBroker: ...
    @property
    def elicitations(self) -> ElicitationBroker: ...
    @property
    def turns(self) -> Sequence[TurnLike]: ...
    def terminal_view(self, terminal_id: str) -> TerminalSnapshot | None: ...
    @property
    def sandbox(self) -> str: ...
