"""A reused pid is not the agent's: an escapee of one terminal test died in a parallel run.

pids wrap at 32,768 on this kind of machine, and the suite starts thousands of processes.
An agent's supervisor (a session leader) ended; its pid was handed to an unrelated process
that called ``setsid()``; the agent's last "kill what is left of its session" then killed
that process's whole session. The kernel reuses no pid that still names a session with
members, so once the leader we started is reaped, a live process of that pid means the
session is someone else's. /proc is read through ``proc_stats``, faked here.
"""

from __future__ import annotations

import pytest

from acp_notebook.protocol import process, tree
from acp_notebook.protocol.tree import ProcessTree, ProcStat

LEADER, CHILD, STRANGER, ITS_CHILD = 4000, 4001, 4100, 4101
OURS = {LEADER: ProcStat(1, LEADER, 100), CHILD: ProcStat(LEADER, LEADER, 110)}
#: The leader's pid, reused by a process started later that made its own session.
REUSED = {LEADER: ProcStat(1, LEADER, 900), ITS_CHILD: ProcStat(LEADER, LEADER, 910)}


@pytest.fixture
def proc(monkeypatch: pytest.MonkeyPatch) -> dict[int, ProcStat]:
    table = dict(OURS)
    monkeypatch.setattr(process, "proc_stats", lambda: dict(table))
    monkeypatch.setattr(tree, "proc_stats", lambda: dict(table))
    monkeypatch.setattr(tree, "_start_time", lambda pid: table[pid].start if pid in table else None)
    return table


def test_a_live_leaders_session_is_its_members(proc: dict[int, ProcStat]) -> None:
    assert process.session_members(LEADER) == [LEADER, CHILD]


def test_once_the_leader_is_gone_its_pid_running_again_names_a_strangers_session(
    proc: dict[int, ProcStat],
) -> None:
    proc.clear()
    proc.update(REUSED)
    assert process.session_members(LEADER, leader_gone=True) == []
    # Without the leader's pid in use, what is left of the session is still ours.
    proc.clear()
    proc[CHILD] = OURS[CHILD]
    assert process.session_members(LEADER, leader_gone=True) == [CHILD]


def test_the_tree_does_not_adopt_the_processes_of_a_reused_root_pid(
    proc: dict[int, ProcStat],
) -> None:
    agent = ProcessTree(LEADER)
    assert agent.scan() == [LEADER, CHILD]
    proc.clear()
    proc.update(REUSED)
    proc[STRANGER] = ProcStat(LEADER, STRANGER, 920)  # a child of the stranger, elsewhere
    assert agent.scan(root_alive=False) == []
    # An orphan of ours that lives on is still followed.
    proc[CHILD] = OURS[CHILD]
    assert agent.scan(root_alive=False) == [CHILD]
