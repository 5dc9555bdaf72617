"""The turn's header says how the agent runs: confined (and where), unconfined by choice,
or unconfined for want of a way to confine it, never silently."""

from __future__ import annotations

from typing import Any

import pytest

from acp_notebook.protocol.sandbox import Confinement, Mechanism
from acp_notebook.ui.turn import TurnView
from acp_notebook.ui.turn_status import title_html

from .conftest import FakeSession, Poster


def texts(widget: Any) -> list[str]:
    """Every HTML value in a widget tree."""
    found = [widget.value] if isinstance(getattr(widget, "value", None), str) else []
    for child in getattr(widget, "children", ()):
        found += texts(child)
    return found


def test_a_confined_agents_turn_says_where_it_may_write(session: FakeSession, post: Poster):
    session.sandbox = "🔒 confined to `project/` · network on"
    turn = session.submit()
    session.start(turn)
    view = TurnView(agent_label="demo", post=post)
    view.bind(session, turn)
    view.refresh()
    assert any("🔒 confined to `project/` · network on" in text for text in texts(view.widget))


LANDLOCK = Mechanism("landlock", 4)


@pytest.mark.parametrize(
    ("confinement", "line"),
    [
        (
            Confinement("workspace", ("/p",)),
            "⚠️ unconfined: this kernel has no Landlock and bubblewrap is not installed",
        ),
        (
            Confinement("off", ("/p",), mechanism=LANDLOCK),
            "🔓 unconfined (sandbox off) · network on",
        ),
        (
            Confinement("workspace-offline", ("/p",), mechanism=LANDLOCK),
            "🔒 confined to `p/` · network off",
        ),
    ],
)
def test_the_header_marks_how_the_agent_runs(confinement: Confinement, line: str):
    assert confinement.headline() == line
    assert line in title_html("demo", "default", None, sandbox=confinement.headline())


def test_an_agent_the_client_did_not_start_has_no_sandbox_line():
    assert "🔒" not in title_html("demo", "default", None) and "⚠️" not in title_html(
        "demo", "", None
    )


def test_a_command_denied_under_the_sandbox_says_the_sandbox_most_likely_refused_it():
    from acp_notebook.client.display import TerminalShown

    denied = TerminalShown("t", True, exited=True, exit_code=1, sandbox_refused=True)
    assert denied.status == (
        "exit code 1: a write was refused, most likely by the sandbox, which allows writes "
        "only to the session's folders and temp"
    )
    assert TerminalShown("t", True, exited=True, exit_code=1).status == "exit code 1"
