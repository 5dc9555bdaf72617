"""Which processes the lingering supervisor still keeps: the live ones below it in a
/proc scan, which is not one instant; and whether any is left, which no scan decides."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from acp_notebook.protocol import supervisor
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


#: A subreaper like the supervisor whose command left a job (double-forked, its parents
#: exited) while every /proc scan comes back empty, as a scan listed before the job was
#: forked does: whether a descendant is left must still be told right, both ways.
BLIND_SCAN = textwrap.dedent(
    f"""
    import ctypes, os, sys, time
    sys.path.insert(0, {str(supervisor.__file__.rpartition("/")[0])!r})
    import supervisor
    supervisor.descendants = lambda root: []
    ctypes.CDLL(None).prctl(supervisor.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    read, write = os.pipe()
    if os.fork() == 0:  # the command
        if os.fork() == 0:  # its fork
            os.setsid()
            if os.fork() == 0:  # the job: lives until the pipe says
                os.read(read, 1)
            os._exit(0)
        os._exit(0)
    gone = []
    while len(gone) < 2:  # the command and the fork between it and the job, reaped
        supervisor.any_descendant(gone)
        time.sleep(0.01)
    print("left while the job runs:", supervisor.any_descendant(gone), len(gone))
    os.write(write, b"x")
    reaped = []
    while supervisor.any_descendant(reaped):
        time.sleep(0.01)
    print("left once it ended:", supervisor.any_descendant([]), len(reaped))
    """
)


def test_a_job_no_scan_sees_is_still_kept_and_its_end_still_seen() -> None:
    # Seen under load: /proc was listed, then the job was forked and its parent exited,
    # so the scan found nothing below the supervisor, which ended the job.
    result = subprocess.run(
        [sys.executable, "-c", BLIND_SCAN], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        "left while the job runs: True 2",
        "left once it ended: False 1",
    ]
