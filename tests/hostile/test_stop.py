"""`%acp --stop` stops an agent that never answers `initialize`: it returns, says what it
ended, and the agent process is gone (issue 11: it raised TimeoutError and left the agent
running)."""

from __future__ import annotations

import os
import re
import time
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from acp_notebook.notebook.controls import agents as agent_controls
from acp_notebook.notebook.runtime.agents import NotebookAgents

from ..notebook.conftest import SAFETY, context
from .test_cli_payloads import hostile


@pytest.fixture
def agents(tmp_path: Path) -> Iterator[NotebookAgents]:
    notebook = NotebookAgents(cwd=str(tmp_path))
    yield notebook
    notebook.shutdown()


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(") ", 1)[1][0] != "Z"
    except OSError:
        return False


def test_stop_stops_an_agent_that_never_answers_initialize(agents: NotebookAgents, tmp_path: Path):
    marker = f"--pid-file={tmp_path / 'agent.pid'}"  # this test's agent among others
    spec = hostile("--hang-initialize", marker)
    runtime = agents.runtime(spec)
    starting = agents.loop.submit(runtime.ensure_started)
    deadline = time.monotonic() + SAFETY
    while not _agent_pids(marker):
        assert time.monotonic() < deadline, "the agent never started"
        time.sleep(0.05)
    pids = _agent_pids(marker)
    ctx = context(agents, agent=spec)
    said = agents.loop.run(agent_controls.stop, ctx, timeout=SAFETY)
    assert re.fullmatch(r"Stopped `python`: \d+ process(es)? ended \(pids? [\d, ]+\)\.", str(said))
    assert runtime.status == "stopped"
    assert starting.exception(SAFETY) is not None  # the start ended, without a connection
    deadline = time.monotonic() + SAFETY
    while any(alive(pid) for pid in pids):
        assert time.monotonic() < deadline, "the agent outlived --stop"
        time.sleep(0.05)


def test_stop_before_the_process_is_up_still_stops_the_start(
    agents: NotebookAgents, tmp_path: Path
):
    """`--stop` while the agent process is still being spawned (before `initialize` is
    sent): the start ends at once instead of waiting out the handshake's limit."""
    # The pid file's path marks this test's agent among those of tests running beside it.
    marker = f"--pid-file={tmp_path / 'agent.pid'}"
    spec = hostile("--hang-initialize", marker)
    runtime = agents.runtime(spec)

    async def start_then_stop() -> BaseException | None:
        failed: list[BaseException] = []

        async def start() -> None:
            try:
                await runtime.ensure_started()
            except Exception as exc:
                failed.append(exc)

        async with anyio.create_task_group() as group:
            group.start_soon(start)
            await anyio.sleep(0)  # the start has begun, its process not yet spawned
            await runtime.stop()
        return failed[0] if failed else None

    failure = agents.loop.run(start_then_stop, timeout=SAFETY)
    assert failure is not None and runtime.status == "stopped"
    deadline = time.monotonic() + SAFETY
    while _agent_pids(marker):
        assert time.monotonic() < deadline, "the agent outlived --stop"
        time.sleep(0.05)


def test_restart_says_what_it_ended_and_what_runs_now(agents: NotebookAgents, tmp_path: Path):
    spec = hostile(f"--pid-file={tmp_path / 'agent.pid'}")
    runtime = agents.runtime(spec)
    agents.loop.run(runtime.ensure_started, timeout=SAFETY)
    first = int((tmp_path / "agent.pid").read_text())
    said = str(agents.loop.run(agent_controls.restart, context(agents, agent=spec), timeout=SAFETY))
    ended, now = said.split("\n")
    assert not alive(first)
    assert re.fullmatch(r"Stopped `python`: 2 processes ended \(pids [\d, ]+\)\.", ended), said
    assert str(first) in ended
    assert now.startswith("python: running (") and str(first) not in now


def _agent_pids(marker: str) -> list[int]:
    """The pids of the hostile agent processes whose command line has ``marker`` (from
    /proc)."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            cmdline = Path(f"/proc/{name}/cmdline").read_bytes()
        except OSError:
            continue
        if marker.encode() in cmdline.split(b"\x00") and alive(int(name)):
            found.append(int(name))
    return found
