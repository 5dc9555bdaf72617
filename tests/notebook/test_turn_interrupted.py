"""What a cell that held a turn says when the kernel interrupt ends it (the kernel test
``tests/kernel/test_interrupt.py`` drives a real one): one line, for each way it ends."""

from __future__ import annotations

import concurrent.futures

from acp_notebook.notebook.turn.handle import TurnInterrupted, interrupted


def test_an_interrupt_ends_the_cell_with_one_line_saying_whether_the_agent_confirmed() -> None:
    confirmed: concurrent.futures.Future[None] = concurrent.futures.Future()
    confirmed.set_result(None)
    error = interrupted(confirmed)
    assert isinstance(error, KeyboardInterrupt) and isinstance(error, TurnInterrupted)
    assert error._render_traceback_() == [
        "KeyboardInterrupt: the kernel interrupt cancelled the agent's turn."
    ]

    # The agent has not answered the cancellation within the grace period.
    unconfirmed = interrupted(concurrent.futures.Future())
    (line,) = unconfirmed._render_traceback_()
    assert "has not confirmed" in line and "%acp --status" in line
