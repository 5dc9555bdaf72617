"""The session settings panel: a user's change is never taken for the panel's own sync."""

from __future__ import annotations

import threading
from typing import Any

import ipywidgets as w

from acp_notebook.protocol import models as m
from acp_notebook.ui.session_panel import SessionPanel

from .conftest import FakeSession


class ModeSession(FakeSession):
    session_id = "s1"

    async def set_mode(self, mode_id: str) -> None:  # pragma: no cover - never awaited here
        pass


def ask_or_code() -> tuple[ModeSession, SessionPanel, w.Dropdown, list[tuple[Any, ...]]]:
    """A session in mode Ask (Ask and Code offered), its panel, the panel's Mode control,
    and what the panel submits to the loop (recorded, never run)."""
    session = ModeSession()
    session.transcript.set_modes(
        m.SessionModeState.parse(
            {
                "currentModeId": "ask",
                "availableModes": [{"id": "ask", "name": "Ask"}, {"id": "code", "name": "Code"}],
            }
        )
    )
    submitted: list[tuple[Any, ...]] = []
    panel = SessionPanel(session, submit=lambda *args: submitted.append(args))  # type: ignore[arg-type]
    mode = panel.controls["__mode__"]
    assert isinstance(mode, w.Dropdown)
    return session, panel, mode, submitted


def test_a_users_change_during_the_loops_sync_still_reaches_the_agent() -> None:
    session, panel, mode, submitted = ask_or_code()
    syncing = threading.Event()
    release = threading.Event()

    def hold_the_sync(change: dict[str, Any]) -> None:
        # Runs inside the panel's sync on the loop thread: keep it open for a moment.
        if threading.current_thread() is not threading.main_thread():
            syncing.set()
            release.wait(5)

    mode.observe(hold_the_sync, names="value")
    # The agent reports that the mode is now Code: the loop thread syncs the control...
    session.transcript.current_mode_id = "code"
    loop = threading.Thread(target=panel.refresh)
    loop.start()
    assert syncing.wait(5)
    # ...while the user picks Ask (the frontend's update, on the kernel's comm thread).
    mode.value = "ask"
    release.set()
    loop.join(5)
    assert [args[-1:] for args in submitted] == [("ask",)]
    # The panel's own writes are not sent back to the agent.
    panel.refresh()
    assert len(submitted) == 1


def test_the_panel_does_not_write_an_older_value_over_a_change_not_applied_yet() -> None:
    # The user picks Code, then Ask, then Code while the loop is still applying the first:
    # a refresh in between (the agent's answer to the first) must not put the control back
    # to the transcript's older value, or the user's next pick starts from a value they
    # never chose (and a pick equal to it is no change: lost).
    _session, panel, mode, submitted = ask_or_code()
    mode.value = "code"
    panel.refresh()  # the transcript still says "ask": the user's "code" is not applied yet
    assert mode.value == "code"
    mode.value = "ask"
    assert [args[-1] for args in submitted] == ["code", "ask"]
