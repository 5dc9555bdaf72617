"""What ending an agent ended, as the user reads it (``protocol/tree.py``)."""

from __future__ import annotations

from acp_notebook.protocol.tree import Stopped


def test_an_end_that_left_processes_says_which_and_how_to_end_them() -> None:
    left = Stopped("gemini", (10, 11, 12), forced=True, left=(12,))
    assert not left.gone
    assert left.sentence() == (
        "The agent `gemini` was not stopped: pid 12 still running after SIGKILL "
        "(`kill -9 12` ends it)."
    )
    assert left.clause() == (
        "and it could not be stopped: pid 12 still running after SIGKILL (`kill -9 12` ends it)"
    )


def test_an_end_says_how_many_processes_ended_and_whether_sigkill_was_needed() -> None:
    assert Stopped("gemini", (10,)).sentence() == "Stopped `gemini`: 1 process ended (pid 10)."
    assert Stopped("gemini", (10, 11), forced=True).clause() == (
        "so it was stopped: 2 processes ended (pids 10, 11, after SIGKILL)"
    )
    assert Stopped("gemini", ()).sentence() == (
        "The agent `gemini` was not running; nothing of it is left."
    )
