"""Value widgets sync while a ``%acp`` cell awaits its turn.

ipywidgets' frontend sends one state update per model at a time and holds the next until
the kernel publishes ``status: idle`` with that update as parent. These tests send widget
messages exactly as JupyterLab does while an awaited ``/slow`` streams, and read the
statuses and the agent's side.
"""

from __future__ import annotations

from typing import Any

import pytest

from .conftest import Comm, Execution, Kernel, Msg

pytestmark = pytest.mark.kernel



def send_update(kernel: Kernel, comm_id: str, state: dict[str, Any]) -> str:
    """An ipywidgets 8 state update from the frontend; returns its msg_id."""
    msg = kernel.kc.session.msg(
        "comm_msg",
        {"comm_id": comm_id, "data": {"method": "update", "state": state, "buffer_paths": []}},
    )
    kernel.kc.shell_channel.send(msg)
    return str(msg["header"]["msg_id"])


def statuses_of(kernel: Kernel, msg_id: str) -> list[str]:
    return [
        str(m.content.get("execution_state"))
        for m in kernel.log
        if m.msg_type == "status" and m.parent_id == msg_id
    ]


def idle_of(kernel: Kernel, msg_id: str) -> Msg | None:
    """The ``status: idle`` whose parent is ``msg_id``, once it arrived."""
    return next(
        (
            m
            for m in kernel.log
            if m.msg_type == "status"
            and m.parent_id == msg_id
            and m.content.get("execution_state") == "idle"
        ),
        None,
    )


def mode_dropdown(turn: Execution) -> Comm | None:
    """The session settings' Mode dropdown under the live view, once it is there."""
    dropdowns = [c for c in turn.comms if c.model == "DropdownModel" and c.description == "Mode"]
    return dropdowns[-1] if dropdowns else None


def settings_accordion(turn: Execution) -> Comm | None:
    """The collapsed "Session settings" under the live view, once it is there."""
    found = [
        c
        for c in turn.comms
        if c.model == "AccordionModel"
        and any("Session settings" in str(title) for title in c.state.get("titles", ()))
    ]
    return found[-1] if found else None


def open_settings(kernel: Kernel, turn: Execution) -> Comm:
    """Open the session settings as a click does (their controls are made then); their
    Mode dropdown."""
    accordion = turn.wait(settings_accordion)
    assert isinstance(accordion, Comm)
    send_update(kernel, accordion.comm_id, {"selected_index": 0})
    dropdown = turn.wait(mode_dropdown)
    assert isinstance(dropdown, Comm)
    return dropdown


def test_each_widget_update_gets_its_idle_while_the_cell_awaits(kernel: Kernel) -> None:
    turn = kernel.execute("%acp /slow", until=None)
    dropdown = open_settings(kernel, turn)
    labels = dropdown.state["_options_labels"]
    code = labels.index("Code")

    sent: list[str] = []
    for index in (code, 0, code):  # Code, Ask, Code: three changes while the turn streams
        assert turn.busy, "the turn ended before the updates were sent"
        msg_id = send_update(kernel, dropdown.comm_id, {"index": index})
        sent.append(msg_id)
        # The frontend holds the next update until this one's idle: it must come while the
        # turn runs, not when the cell finishes (an order, not a time: no timing threshold).
        update_idle = kernel.wait_for(
            lambda msg_id=msg_id: idle_of(kernel, msg_id), f"status idle for update {len(sent)}"
        )
        assert statuses_of(kernel, msg_id) == ["busy", "idle"]
        assert turn.idle is None or update_idle.seq < turn.idle.seq, (
            f"update {len(sent)}'s idle was held until the turn ended"
        )
    assert turn.busy, "the cell went idle before its turn ended"

    # The kernel's indicator stays right: after each update's idle, busy again for the cell.
    last_idle = max(m.seq for m in kernel.log if m.parent_id == sent[-1])
    kernel.wait_for(
        lambda: [
            m
            for m in kernel.log[last_idle:]
            if m.msg_type == "status"
            and m.parent_id == turn.msg_id
            and m.content["execution_state"] == "busy"
        ],
        "a busy status for the running cell after the last update's idle",
    )

    turn.click("Cancel")
    turn.wait("final")
    # The agent got every change, the last one last.
    modes = [
        message["params"]
        for direction, message in kernel.agent_log()
        if direction == "send"
        and message.get("method") in ("session/set_mode", "session/set_config_option")
    ]
    assert [p.get("modeId", p.get("value")) for p in modes][-3:] == ["code", "ask", "code"], modes
    kernel.execute("%acp --mode ask", until="idle")


def test_an_idle_kernel_publishes_one_status_pair_per_update(kernel: Kernel) -> None:
    """Nothing changes when no cell awaits: the kernel's own busy/idle, once each."""
    turn = kernel.execute("%acp --no-wait /slow", until="idle")
    dropdown = open_settings(kernel, turn)
    msg_id = send_update(kernel, dropdown.comm_id, {"index": dropdown.state["index"]})
    kernel.wait_for(lambda: "idle" in statuses_of(kernel, msg_id), "the update's idle")
    kernel.settle(0.2)
    assert statuses_of(kernel, msg_id) == ["busy", "idle"]
    turn.click("Cancel")
    turn.wait("final")
