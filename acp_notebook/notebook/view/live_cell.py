"""The live cell of an interactive turn: the turn's view, then panels under it (a login
prompt while the agent wants one, the session's settings once the turn runs), replaced
by the static transcript when the turn ends.

Everything here but the constructor runs on the agent loop thread, the only writer of
these widgets once the turn started.
"""

from __future__ import annotations

import logging
import uuid

import ipywidgets as w
from IPython.display import update_display

from ...client.session import PromptTurn, Session
from ...ui import layouts
from ...ui.auth import AuthPrompt
from ...ui.segments import close_tree
from ...ui.session_panel import SessionPanel
from ...ui.turn import TurnView
from ..runtime.agent import Status
from ..runtime.loop import AgentLoop

log = logging.getLogger(__name__)


class LiveCell:
    """What an interactive ``%acp`` displays (``widget``, under ``display_id``)."""

    def __init__(self, view: TurnView, loop: AgentLoop) -> None:
        self.view = view
        self._loop = loop
        #: Hands a widget callback to the agent loop (from any thread).
        self.post = loop.post
        self.display_id = uuid.uuid4().hex
        self._panels = layouts.vbox()
        self.widget = layouts.vbox([view.widget, self._panels], width="100%")
        self.login: AuthPrompt | None = None
        self._accordion: w.Accordion | None = None
        self._settings: SessionPanel | None = None
        self._ended = False

    def starting(self, status: Status) -> None:
        """Say that the agent is starting, unless it runs already."""
        if status != "ready":
            self.view.set_status("Starting agent…" if status != "failed" else "Restarting agent…")

    def start_progress(self, line: str) -> None:
        """A line the agent (or the ``npx``/``uvx`` fetching it) wrote while starting."""
        line = line.strip()
        if line:
            self.view.set_status(f"Starting agent… {line[:160]}")

    def show_login(self, prompt: AuthPrompt) -> None:
        self.login = prompt
        self._panels.children = (prompt.widget,)

    def follow(self, session: Session, turn: PromptTurn) -> None:
        """Stream ``turn``; Cancel cancels it; the session's mode and config options
        (if any) as controls under the view, collapsed, following agent-side changes."""
        self.view.on_cancel = turn.cancel
        self.view.bind(session, turn)
        transcript = session.transcript
        if self._accordion is not None or not (transcript.modes or transcript.config_options):
            return
        # The panel's controls are made when it is first opened: most turns never open it,
        # and its widget models would be most of what a short turn sends.
        holder = layouts.vbox()
        accordion = w.Accordion(children=[holder], selected_index=None, layout=layouts.layout())
        accordion.set_title(0, "Session settings (mode, model, options)")
        accordion.observe(
            lambda _change: self.post(lambda: self._open_settings(session, holder)),
            "selected_index",
        )
        self._accordion = accordion
        self._panels.children = (*self._panels.children, accordion)

    def _open_settings(self, session: Session, holder: w.VBox) -> None:
        """The settings panel, made in ``holder`` the first time it is opened (loop)."""
        if self._settings is not None or self._ended:
            return
        self._settings = SessionPanel(
            session, submit=self._loop.submit, schedule_later=self._loop.call_later
        )
        holder.children = (self._settings.widget,)

    def end(self, bundle: dict[str, str], error: str | None) -> None:
        """spec of a saved notebook: the live widget becomes the static transcript
        (``ui/saved_transcript.py``), so the .ipynb shows the conversation when reopened."""
        self._ended = True
        if error is not None:
            self.view.fail(error)
        else:
            self.view.finish()
        if self._settings is not None:
            self._settings.close()
        try:
            update_display(bundle, raw=True, display_id=self.display_id)
        except Exception:
            log.exception("could not replace the live view")
            return
        self.view.close()
        close_tree(self.widget)  # the login and settings panels too
