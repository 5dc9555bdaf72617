"""What every view of one turn needs from its surroundings, passed down as one object."""

from __future__ import annotations

from dataclasses import dataclass

from ..client.permissions import PermissionBroker
from ..client.render import TerminalLookup
from .permission import Post


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
