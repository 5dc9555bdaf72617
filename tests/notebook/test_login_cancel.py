"""The turn's own Cancel (the header's) ends a login the cell is waiting on: the login panel
waiting for a choice, and a login the agent is still carrying out."""

from __future__ import annotations

from acp_notebook.notebook.runtime.agents import NotebookAgents
from acp_notebook.notebook.turn.handle import TurnHandle, TurnSettings
from acp_notebook.notebook.view.live_cell import LiveCell
from acp_notebook.ui.turn import TurnView

from .conftest import SAFETY, Seen, agent_command


def _turn_with_login(agents: NotebookAgents, *args: str) -> tuple[TurnView, LiveCell, TurnHandle]:
    loop = agents.loop
    view = TurnView("login agent", "default", post=loop.post, schedule_later=loop.call_later)
    cell = LiveCell(view, loop)
    shown = Seen()
    cell.widget.children[1].observe(shown, "children")  # the panels under the view
    command = " ".join([agent_command("login_agent.py"), *args])
    handle = agents.start_turn(TurnSettings(prompt="hello", agent=command), cell)
    shown.wait("the login prompt")
    return view, cell, handle


def test_the_header_cancel_ends_a_login_panel_waiting_for_a_choice(
    agents: NotebookAgents,
) -> None:
    """codex's login panel kept waiting 150 s after the header's "■ Cancel"."""
    view, cell, handle = _turn_with_login(agents)
    view.cancel()
    handle.wait(SAFETY)
    assert handle.error is not None and "needs authentication: Log in first." in handle.error
    assert cell.login is not None and "Cancelled." in cell.login.status.value
    sent = [message.message for message in agents.message_table() if message.direction == "send"]
    assert "authenticate" not in [raw.get("method") for raw in sent if raw]


def test_the_header_cancel_ends_a_login_the_agent_is_carrying_out(
    agents: NotebookAgents,
) -> None:
    view, cell, handle = _turn_with_login(agents, "--hang")
    prompt = cell.login
    assert prompt is not None
    logging_in = Seen()
    view._status.observe(  # the header's status line
        lambda change: logging_in() if "Logging in" in change["new"] else None, "value"
    )
    prompt.buttons["web"].click()
    logging_in.wait("the login to start")
    view.cancel()
    handle.wait(SAFETY)
    assert handle.error is not None and "needs authentication: Log in first." in handle.error
    assert prompt.done and "Cancelled." in prompt.status.value
