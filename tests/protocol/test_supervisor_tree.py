"""Which processes the lingering supervisor still keeps: the live ones below it in a
/proc scan, which is not one instant."""

from __future__ import annotations

from acp_notebook.protocol.supervisor import live_below

SUPERVISOR, COMMAND, FORKED, JOB = 10, 11, 12, 13


def test_a_job_read_before_its_parent_exited_is_still_found() -> None:
    # Seen in a whole-suite run: a double-forked job (setsid) was read while its parent was
    # alive, the parent read as a zombie a moment later, and the supervisor ended the job
    # as if nothing were left.
    scan = [(JOB, "S", FORKED), (FORKED, "Z", COMMAND), (COMMAND, "Z", SUPERVISOR)]
    assert live_below(SUPERVISOR, scan) == [JOB]


def test_zombies_are_not_counted_and_other_trees_are_not_followed() -> None:
    scan = [(COMMAND, "Z", SUPERVISOR), (FORKED, "S", 99), (JOB, "R", COMMAND)]
    assert live_below(SUPERVISOR, scan) == [JOB]
    assert live_below(SUPERVISOR, [(COMMAND, "Z", SUPERVISOR)]) == []
